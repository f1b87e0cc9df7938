public import MediaCore

/// The sample entries (ISO/IEC 14496-12 §8.5.2) the MP4 writers put in a track's `stsd`: `avc1`
/// + `avcC` (ISO/IEC 14496-15 §5.4), `hvc1` or `hev1` + `hvcC` (§8.4), `mp4a` + `esds`
/// (ISO/IEC 14496-14 §5.6), `Opus` + `dOps` (Opus in ISOBMFF, §4.3). G.711 has none that
/// players accept, so it is refused.
public enum MP4SampleEntry {
    /// Which sample entry holds an H.265 track.
    public enum HEVCEntry: String, Hashable, Sendable {
        /// `hvc1`: the parameter sets in the `hvcC` (what Apple's players take).
        case hvc1
        /// `hev1`: parameter sets may also come in band (on request only).
        case hev1
    }

    /// The entry's type for `format`: `avc1`, `hvc1`/`hev1`, `mp4a` or `Opus`.
    ///
    /// - Throws: `mp4UnsupportedCodec` for G.711 (field `codec`).
    public static func type(of format: MediaFormatDescription, hevcEntry: HEVCEntry = .hvc1) throws(MediaError) -> MP4BoxType {
        switch format {
        case .video(let video):
            switch video.codec {
            case .h264: return "avc1"
            case .hevc: return hevcEntry == .hvc1 ? "hvc1" : "hev1"
            }
        case .audio(let audio):
            switch audio.codec {
            case .aac: return "mp4a"
            case .opus: return "Opus"
            case .pcmu, .pcma:
                throw MediaError(.mp4UnsupportedCodec, field: "codec",
                                 "G.711 (\(audio.codec.rtpEncodingName)) has no MP4 sample entry players accept: convert it to AAC first")
            }
        }
    }

    /// Appends the sample entry of `format` (one entry of an `stsd`).
    ///
    /// - Parameters:
    ///   - format: the track's format.
    ///   - hevcEntry: `hvc1` (default) or `hev1` for H.265.
    ///   - trackID: the `ES_ID` an `esds` names.
    ///   - writer: where the entry goes.
    /// - Throws: `mp4UnsupportedCodec` for G.711.
    public static func append(_ format: MediaFormatDescription, hevcEntry: HEVCEntry = .hvc1, trackID: Int = 1,
                              to writer: inout MP4BoxWriter) throws(MediaError) {
        let type = try type(of: format, hevcEntry: hevcEntry)
        switch format {
        case .video(let video):
            writer.box(type) { entry in
                appendVisualSampleEntryFields(width: video.dimensions.width, height: video.dimensions.height, to: &entry)
                entry.box(video.codec == .h264 ? "avcC" : "hvcC") { $0.append(configurationRecord(of: video)) }
            }
        case .audio(let audio):
            writer.box(type) { entry in
                appendAudioSampleEntryFields(channelCount: audio.channelCount, sampleRate: audio.sampleRate, to: &entry)
                if audio.codec == .aac {
                    entry.fullBox("esds", version: 0, flags: 0) { $0.append(elementaryStreamDescriptor(audio, trackID: trackID)) }
                } else {
                    entry.box("dOps") { $0.append(opusSpecificBox(audio)) }
                }
            }
        }
    }

    /// The bytes a frame is stored as under `hevcEntry`: its data as it is, except an H.265 frame
    /// in an `hvc1` track, whose VPS, SPS and PPS NAL units (types 32–34) are left out — `hvc1`
    /// says the `hvcC` holds every parameter set (`array_completeness` 1, ISO/IEC 14496-15
    /// §8.4.1) and a new one comes as a new sample description. Data whose 4-byte lengths do not
    /// add up is stored as it is.
    static func sampleData(of frame: CompressedFrame, hevcEntry: HEVCEntry) -> [UInt8] {
        guard hevcEntry == .hvc1, frame.videoFormat?.codec == .hevc else { return frame.data }
        let data = frame.data
        var kept: [UInt8] = [], at = 0, removed = false
        while at < data.count {
            guard data.count - at >= 5 else { return data }
            let length = Int(data[at]) << 24 | Int(data[at + 1]) << 16 | Int(data[at + 2]) << 8 | Int(data[at + 3])
            guard length > 0, length <= data.count - at - 4 else { return data }
            let type = data[at + 4] >> 1 & 0x3F
            if (32...34).contains(type) {
                removed = true
            } else {
                kept += data[at..<at + 4 + length]
            }
            at += 4 + length
        }
        return removed ? kept : data
    }

    /// The format's `avcC` or `hvcC`, its length size set to 4 bytes (`lengthSizeMinusOne` 3):
    /// a frame's NAL units always come after 4-byte lengths (`CompressedFrame.data`), whatever
    /// the record they were read with said.
    static func configurationRecord(of format: VideoFormatDescription) -> [UInt8] {
        var record = format.configurationRecordBytes
        // avcC: byte 4 holds reserved '111111'b and lengthSizeMinusOne (ISO/IEC 14496-15 §5.3.3.1);
        // hvcC: byte 21 holds constantFrameRate, numTemporalLayers, temporalIdNested, lengthSizeMinusOne (§8.3.3.1).
        let index = format.codec == .h264 ? 4 : 21
        if record.count > index { record[index] = record[index] & 0xFC | 0x03 }
        return record
    }

    /// `SampleEntry` (§8.5.2.2) and `VisualSampleEntry` (§12.1.3) fields before the boxes.
    static func appendVisualSampleEntryFields(width: Int, height: Int, to entry: inout MP4BoxWriter) {
        entry.appendZeros(6)                 // reserved
        entry.append16(1)                    // data_reference_index
        entry.appendZeros(16)                // pre_defined, reserved, pre_defined[3]
        entry.append16(UInt16(clamping: width))
        entry.append16(UInt16(clamping: height))
        entry.append32(0x0048_0000)          // horizresolution 72 dpi
        entry.append32(0x0048_0000)          // vertresolution
        entry.append32(0)                    // reserved
        entry.append16(1)                    // frame_count
        entry.appendZeros(32)                // compressorname (empty Pascal string)
        entry.append16(0x0018)               // depth
        entry.append16(0xFFFF)               // pre_defined = -1
    }

    /// `SampleEntry` and `AudioSampleEntry` (§12.2.3) fields before the boxes.
    static func appendAudioSampleEntryFields(channelCount: Int, sampleRate: Int, to entry: inout MP4BoxWriter) {
        entry.appendZeros(6)                 // reserved
        entry.append16(1)                    // data_reference_index
        entry.appendZeros(8)                 // reserved[2]
        entry.append16(UInt16(clamping: channelCount))
        entry.append16(16)                   // samplesize
        entry.appendZeros(4)                 // pre_defined, reserved
        // samplerate is 16.16: rates above 65535 Hz do not fit, and 0 says "see the decoder config".
        entry.append32(sampleRate <= 0xFFFF ? UInt32(sampleRate) << 16 : 0)
    }

    /// The `ES_Descriptor` of an AAC track (ISO/IEC 14496-1 §7.2.6.5) as an `esds` holds it:
    /// `DecoderConfigDescriptor` (objectTypeIndication 0x40 MPEG-4 Audio, streamType 5 audio)
    /// with the `AudioSpecificConfig` as its `DecoderSpecificInfo`, and an `SLConfigDescriptor`
    /// (predefined 2, as MP4 files require).
    static func elementaryStreamDescriptor(_ format: AudioFormatDescription, trackID: Int) -> [UInt8] {
        let decoderSpecificInfo = descriptor(tag: 0x05, format.magicCookie)
        var config: [UInt8] = [0x40, 0x05 << 2 | 0x01]   // objectTypeIndication; streamType, upStream 0, reserved 1
        config += [0, 0, 0]                              // bufferSizeDB
        config += [0, 0, 0, 0, 0, 0, 0, 0]               // maxBitrate, avgBitrate (unknown)
        let decoderConfig = descriptor(tag: 0x04, config + decoderSpecificInfo)
        let slConfig = descriptor(tag: 0x06, [0x02])
        let esID = UInt16(clamping: trackID)
        return descriptor(tag: 0x03, [UInt8(esID >> 8), UInt8(truncatingIfNeeded: esID), 0] + decoderConfig + slConfig)
    }

    /// A descriptor (ISO/IEC 14496-1 §8.3.3): its tag, its size in the expandable 7-bit form,
    /// then its bytes.
    static func descriptor(tag: UInt8, _ body: [UInt8]) -> [UInt8] {
        var size = body.count, sizeBytes: [UInt8] = [UInt8(size & 0x7F)]
        size >>= 7
        while size > 0 {
            sizeBytes.insert(UInt8(size & 0x7F) | 0x80, at: 0)
            size >>= 7
        }
        return [tag] + sizeBytes + body
    }

    /// The `OpusSpecificBox` body (Opus in ISOBMFF §4.3.2): the fields of the format's
    /// `OpusHead` (RFC 7845 §5.1, little-endian) in big-endian order, `Version` 0; without an
    /// `OpusHead`, the format's channels, no pre-skip, 48 kHz, mapping family 0.
    static func opusSpecificBox(_ format: AudioFormatDescription) -> [UInt8] {
        let head = format.magicCookie
        if head.count >= 19, head.starts(with: Array("OpusHead".utf8)) {
            var body: [UInt8] = [0, head[9]]                 // Version, OutputChannelCount
            body += [head[11], head[10]]                     // PreSkip
            body += [head[15], head[14], head[13], head[12]] // InputSampleRate
            body += [head[17], head[16]]                     // OutputGain
            body.append(head[18])                            // ChannelMappingFamily
            if head[18] != 0 { body += head[19...] }         // StreamCount, CoupledCount, ChannelMapping
            return body
        }
        let channels = UInt8(clamping: format.channelCount)
        return [0, channels, 0, 0, 0, 0, 0xBB, 0x80, 0, 0, 0]
    }
}
