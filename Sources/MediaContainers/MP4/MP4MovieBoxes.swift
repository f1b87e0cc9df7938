import MediaCore

/// The boxes of a `moov` both MP4 writers share (ISO/IEC 14496-12 §8.2–§8.4, §8.7.1–2):
/// `ftyp`, `mvhd`, `tkhd`, `mdhd`, `hdlr`, the media header and `dinf`.
enum MP4MovieBoxes {
    /// The unity matrix of `mvhd` and `tkhd` (§8.2.2.3).
    static let unityMatrix: [UInt32] = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000]

    /// `ftyp` (§4.3) with `major` and the compatible `brands`.
    static func appendFileType(major: MP4BoxType, minorVersion: UInt32, brands: [MP4BoxType], to writer: inout MP4BoxWriter) {
        writer.box("ftyp") { box in
            box.append(major)
            box.append32(minorVersion)
            for brand in brands { box.append(brand) }
        }
    }

    /// Appends a time or duration: 32 bits in version 0, 64 in version 1.
    static func appendTime(_ value: Int64, version: UInt8, to writer: inout MP4BoxWriter) {
        if version == 1 { writer.append64(UInt64(max(0, value))) } else { writer.append32(UInt32(clamping: max(0, value))) }
    }

    /// The version a box needs for `duration`: 1 when it passes 32 bits.
    static func version(for duration: Int64) -> UInt8 { duration > Int64(UInt32.max) ? 1 : 0 }

    /// `mvhd` (§8.2.2).
    static func appendMovieHeader(timescale: Int, duration: Int64, nextTrackID: Int, to writer: inout MP4BoxWriter) {
        let version = version(for: duration)
        writer.fullBox("mvhd", version: version, flags: 0) { box in
            appendTime(0, version: version, to: &box)   // creation_time
            appendTime(0, version: version, to: &box)   // modification_time
            box.append32(UInt32(timescale))
            appendTime(duration, version: version, to: &box)
            box.append32(0x0001_0000)                   // rate 1.0
            box.append16(0x0100)                        // volume 1.0
            box.appendZeros(10)                         // reserved
            for value in unityMatrix { box.append32(value) }
            box.appendZeros(24)                         // pre_defined[6]
            box.append32(UInt32(nextTrackID))
        }
    }

    /// `tkhd` (§8.3.2): enabled and in the movie; `duration` in the movie's timescale.
    static func appendTrackHeader(trackID: Int, duration: Int64, format: MediaFormatDescription, to writer: inout MP4BoxWriter) {
        let version = version(for: duration)
        writer.fullBox("tkhd", version: version, flags: 0x000003) { box in
            appendTime(0, version: version, to: &box)   // creation_time
            appendTime(0, version: version, to: &box)   // modification_time
            box.append32(UInt32(trackID))
            box.append32(0)                             // reserved
            appendTime(duration, version: version, to: &box)
            box.appendZeros(8)                          // reserved[2]
            box.append16(0)                             // layer
            box.append16(0)                             // alternate_group
            box.append16(format.audio != nil ? 0x0100 : 0)  // volume
            box.append16(0)                             // reserved
            for value in unityMatrix { box.append32(value) }
            let size = format.video?.dimensions ?? (width: 0, height: 0)
            box.append32(UInt32(clamping: size.width) << 16)   // width 16.16
            box.append32(UInt32(clamping: size.height) << 16)  // height 16.16
        }
    }

    /// `mdhd` (§8.4.2), language `und`.
    static func appendMediaHeader(timescale: Int, duration: Int64, to writer: inout MP4BoxWriter) {
        let version = version(for: duration)
        writer.fullBox("mdhd", version: version, flags: 0) { box in
            appendTime(0, version: version, to: &box)
            appendTime(0, version: version, to: &box)
            box.append32(UInt32(timescale))
            appendTime(duration, version: version, to: &box)
            box.append16(0x55C4)                        // pad 0, language "und" (ISO 639-2/T packed)
            box.append16(0)                             // pre_defined
        }
    }

    /// `hdlr` (§8.4.3): `vide` or `soun`.
    static func appendHandler(for format: MediaFormatDescription, to writer: inout MP4BoxWriter) {
        writer.fullBox("hdlr", version: 0, flags: 0) { box in
            box.append32(0)                             // pre_defined
            box.append(format.video != nil ? MP4BoxType("vide") : MP4BoxType("soun"))
            box.appendZeros(12)                         // reserved[3]
            box.append(Array((format.video != nil ? "VideoHandler" : "SoundHandler").utf8) + [0])
        }
    }

    /// The media information header (`vmhd` §12.1.2 or `smhd` §12.2.2) and `dinf` → `dref`
    /// with one self-contained `url ` (§8.7.1–2), the start of `minf`.
    static func appendMediaInformationHeaders(for format: MediaFormatDescription, to writer: inout MP4BoxWriter) {
        if format.video != nil {
            writer.fullBox("vmhd", version: 0, flags: 1) { $0.appendZeros(8) }  // graphicsmode, opcolor[3]
        } else {
            writer.fullBox("smhd", version: 0, flags: 0) { $0.appendZeros(4) }  // balance, reserved
        }
        writer.box("dinf") { dinf in
            dinf.fullBox("dref", version: 0, flags: 0) { dref in
                dref.append32(1)
                dref.fullBox("url ", version: 0, flags: 1) { _ in }
            }
        }
    }

    /// `stsd` (§8.5.2) with one entry per format, in order.
    static func appendSampleDescriptions(_ formats: [MediaFormatDescription], hevcEntry: MP4SampleEntry.HEVCEntry, trackID: Int,
                                         to writer: inout MP4BoxWriter) throws(MediaError) {
        try writer.fullBox("stsd", version: 0, flags: 0) { (box: inout MP4BoxWriter) throws(MediaError) in
            box.append32(UInt32(formats.count))
            for format in formats { try MP4SampleEntry.append(format, hevcEntry: hevcEntry, trackID: trackID, to: &box) }
        }
    }

    /// The timescale of a track of `format`: `videoTimescale` for video, the sample rate for
    /// audio (48 kHz for Opus, RFC 7845).
    static func timescale(of format: MediaFormatDescription, videoTimescale: Int) -> Int {
        switch format {
        case .video: videoTimescale
        case .audio(let audio): audio.codec == .opus ? 48_000 : max(1, audio.sampleRate)
        }
    }
}
