import H264
import MediaContainers

/// The fuzzed entry points, one per parser. A property violation traps (`fatalError`), which
/// libFuzzer reports as a crash with the input that caused it.
enum FuzzTarget: String, CaseIterable {
    /// `AnnexB.nalUnits(in:)` / `nalUnits(validating:)`: locations in bounds, in order, never
    /// empty, never ending in a zero byte.
    case annexb
    /// `AVCC.nalUnits(in:lengthSize:)` at length sizes 1, 2 and 4 (and 3, which must be refused).
    case avcc
    /// `AVCDecoderConfigurationRecord(parsing:)` and `(extradata:)`; a parsed record serialises
    /// and parses back to itself.
    case avcC = "avcc-record"
    /// `SequenceParameterSet(nalUnit:)` and its syntax-element dump, on the input as one NAL unit.
    case sps
    /// `PictureParameterSet` with an SPS context: the input is Annex-B; its SPS NAL units are
    /// parsed first and given to every PPS.
    case pps
    /// `SliceHeader`: the input is Annex-B; SPS/PPS go to a `ParameterSetCache`, slices are parsed
    /// against it.
    case slice
    /// `AnnexBStreamReader` with chunk sizes drawn from the input's first bytes: the units equal
    /// those of whole-buffer parsing.
    case stream
    /// `AccessUnitAssembler` over Annex-B: access units partition the input and carry every NAL
    /// unit (but reported garbage), in order.
    case assembler
    /// Annex-B → AVCC → Annex-B (length sizes 4, 2, 1): every NAL unit is preserved.
    case roundtrip
    /// H264Media's y4m reader (`Y4MStreamReader`, the parser under `h264 encode`'s): frames come
    /// out whole, of the header's size, or as an `MediaError`; the same whatever the chunk sizes.
    case y4m
    /// `FLVReader` on the input as a file and, behind an FLV header, as tags: frames hold valid
    /// 4-byte AVCC inside the input, offsets are in it, the only fatal error is lost framing;
    /// streamed in chunks (sizes from the input's length) it gives the same events; the frames
    /// written again by `FLVWriter` read back the same.
    case flv
    /// `FLVAudioTag` on the input as an audio tag body, and `FLVReader` on the input cut into
    /// audio tags (FLVAudioTarget.swift): bodies written back the same, every tag one frame,
    /// skipped tag or AAC sequence header, nothing fatal.
    case flvAudio = "flv-audio"
    /// `MP4Reader` on the input as a whole MP4 file in memory (MP4Target.swift): every sample
    /// inside the input, no more frames than samples, video frames valid 4-byte AVCC, no error
    /// from `next()` once the boxes are read.
    case mp4
    /// `HLSPackager` driven by the input as frames, then a query and a file name (HLSTarget.swift):
    /// the window bounded, every listed file served, parts within `PART-TARGET`.
    case hls
    /// `RTPDepacketizer` on packets cut from the input (2-byte length prefixes): every access unit
    /// holds whole NAL units, and `RTPZeroCopyDepacketizer` on the same packets (all in the
    /// input's one buffer) gives the same events; then the input as Annex-B, packetized at an MTU drawn from its first
    /// byte and depacketized, gives its NAL units back.
    case rtp
    /// `SessionDescription(parsing:)` on the input as text; a parsed description's text parses
    /// back to the same description. `Base64.decode` on the input, re-encoded, decodes the same.
    case sdp
    /// Arbitrary bytes, in chunks drawn from the first 8 bytes, through `AnnexBDecoder` into a
    /// libavcodec `DecoderSession` (DecoderTarget.swift): every frame's planes are consistent.
    case decoder
    /// `RTSPMessageReader` on the input as one connection's bytes, whole and in chunks whose sizes
    /// come from the first byte: the same messages; every request written back reads the same;
    /// every `Transport` header parses or throws `invalidTransport`; every response's body is
    /// its `Content-Length`.
    case rtsp
    /// `RTSPAuthenticationChallenge.parse` on the input as a `WWW-Authenticate` value
    /// (AuthenticationTarget.swift): schemes and names lowercased and never empty; the challenges
    /// written back (values quoted) parse to the same challenges.
    case wwwAuthenticate = "www-authenticate"
    /// `RTSPAuthorization.parse` on the input as an `Authorization` value, as the server reads
    /// it (AuthorizationTarget.swift): never traps; the credentials written back parse to the same.
    case authorization
    /// `RTCPPacket.packets(in:)` (RTCPTarget.swift): never traps; receiver reports survive their bytes.
    case rtcp = "rtcp"
    /// `RTSPRTPInfo(parsing:)` (RTPInfoTarget.swift): never traps; warnings point into the value.
    case rtpInfo = "rtp-info"
    /// H.265 VPS/SPS/PPS and the `hvcC` record (HEVCTargets.swift).
    case hevcParameterSets = "hevc-ps"
    /// `HEVCAccessUnitAssembler` and HVCC samples back to Annex-B (HEVCTargets.swift).
    case hevcAssembler = "hevc-assembler"
    /// `RTMPChunkReader` on the input as a connection's chunks (RTMPTargets.swift): whole and
    /// chunked alike, bounded, written back the same.
    case rtmpChunks = "rtmp-chunks"
    /// `AMF0Reader` and `RTMPCommand(parsing:)` (RTMPTargets.swift): never trap; round trips.
    case amf0
    /// `HEVCRTPDepacketizer` and the packetizer round trip (HEVCRTPTarget.swift).
    case hevcRTP = "hevc-rtp"
    /// `AudioRTPDepacketizer` for each payload format, and the packetizer round trip (AudioTargets.swift).
    case audioRTP = "audio-rtp"
    /// `AudioSpecificConfig`, `StreamMuxConfig` and `AudioMuxElement` (AudioTargets.swift).
    case audioConfig = "audio-config"
    /// `SessionDescription.audioMedia(parsing:)` and its lines read back (AudioTargets.swift).
    case sdpAudio = "sdp-audio"

    func run(_ bytes: [UInt8]) {
        switch self {
        case .annexb: Self.annexB(bytes)
        case .avcc: Self.avcc(bytes)
        case .avcC: Self.configurationRecord(bytes)
        case .sps: Self.sps(bytes)
        case .pps: Self.pps(bytes)
        case .slice: Self.slice(bytes)
        case .stream: Self.stream(bytes)
        case .assembler: Self.assembler(bytes)
        case .roundtrip: Self.roundTrip(bytes)
        case .y4m: Self.y4m(bytes)
        case .flv: Self.flv(bytes)
        case .flvAudio: Self.flvAudio(bytes)
        case .mp4: Self.mp4(bytes)
        case .hls: Self.hls(bytes)
        case .rtp: Self.rtp(bytes)
        case .sdp: Self.sdp(bytes)
        case .decoder: Self.decoder(bytes)
        case .rtsp: Self.rtsp(bytes)
        case .wwwAuthenticate: Self.wwwAuthenticate(bytes)
        case .authorization: Self.authorization(bytes)
        case .rtcp: Self.rtcp(bytes)
        case .rtpInfo: Self.rtpInfo(bytes)
        case .hevcParameterSets: Self.hevcParameterSets(bytes)
        case .hevcAssembler: Self.hevcAssembler(bytes)
        case .rtmpChunks: Self.rtmpChunks(bytes)
        case .amf0: Self.amf0(bytes)
        case .hevcRTP: Self.hevcRTP(bytes)
        case .audioRTP: Self.audioRTP(bytes)
        case .audioConfig: Self.audioConfig(bytes)
        case .sdpAudio: Self.sdpAudio(bytes)
        }
    }

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("property violated: \(message())") }
    }

    // MARK: - Targets

    static func annexB(_ bytes: [UInt8]) {
        let units = AnnexB.nalUnits(in: bytes)
        var previousEnd = 0
        for unit in units {
            check(unit.startCodeOffset >= previousEnd, "start code before the previous unit's end")
            check(unit.startCodeLength == 3 || unit.startCodeLength == 4, "start code length \(unit.startCodeLength)")
            check(!unit.range.isEmpty && unit.range.upperBound <= bytes.count, "unit range \(unit.range)")
            check(bytes[unit.range.upperBound - 1] != 0, "unit ends in a zero byte")
            previousEnd = unit.range.upperBound
        }
        do {
            let validated = try AnnexB.nalUnits(validating: bytes)
            check(validated == units, "validating split differs")
        } catch {
            check(error.code == .missingStartCode, "unexpected error \(error)")
        }
        if let first = AnnexB.firstStartCode(in: bytes) {
            check(first < bytes.count, "start code offset past the end")
        }
    }

    static func avcc(_ bytes: [UInt8]) {
        for size in [1, 2, 4] {
            for allowEmpty in [false, true] {
                guard let units = try? AVCC.nalUnits(in: bytes, lengthSize: size, allowingEmptyNALUnits: allowEmpty) else { continue }
                var position = 0
                for range in units {
                    check(range.lowerBound >= position + size && range.upperBound <= bytes.count && !range.isEmpty,
                          "AVCC unit \(range) at size \(size)")
                    position = range.upperBound
                }
                if !allowEmpty {
                    // Writing the units back gives the input.
                    let rebuilt = try? AVCC.data(nalUnits: units.map { Array(bytes[$0]) }, lengthSize: size)
                    check(rebuilt == bytes, "AVCC units do not rebuild the input at size \(size)")
                }
            }
        }
        // The tolerant reading: units in bounds and in order; where it found no Annex-B it is the
        // strict split; where it did, the units before the start code are the strict walk's.
        for size in [1, 2, 4] {
            guard let reading = try? AVCC.read(bytes, lengthSize: size) else { continue }
            var position = 0
            for range in reading.nalUnits {
                check(range.lowerBound >= position && range.upperBound <= bytes.count && !range.isEmpty,
                      "tolerant AVCC unit \(range) at size \(size)")
                position = range.upperBound
            }
            check(reading.warnings.count == (reading.annexBOffset == nil ? 0 : 1), "one warning per switch to Annex-B")
            if let annexB = reading.annexBOffset {
                check(bytes[annexB...].starts(with: [0, 0, 1]) || bytes[annexB...].starts(with: [0, 0, 0, 1]),
                      "Annex-B found where no start code is")
                let head = Array(bytes[..<annexB])
                if let strict = try? AVCC.nalUnits(in: head, lengthSize: size) {
                    check(Array(reading.nalUnits.prefix(strict.count)) == strict, "the AVCC part differs from the strict split")
                }
            } else {
                check((try? AVCC.nalUnits(in: bytes, lengthSize: size)) == reading.nalUnits, "tolerant and strict splits differ")
            }
        }
        do {
            _ = try AVCC.nalUnits(in: bytes, lengthSize: 3)
            check(false, "length size 3 accepted")
        } catch {
            check(error.code == .invalidLengthSize, "length size 3: \(error)")
        }
        var copy = bytes
        _ = try? AnnexB.convertAVCCInPlace(&copy)
        check(copy.count == bytes.count, "in-place conversion changed the size")
        _ = try? AnnexB.fromAVCC(bytes, lengthSize: 4)
    }

    static func configurationRecord(_ bytes: [UInt8]) {
        if let record = try? AVCDecoderConfigurationRecord(parsing: bytes) {
            check(record.configurationVersion == 1 && record.nalUnitLengthSize != 3, "bad record accepted")
            if let serialized = try? record.serialized() {
                let again = try? AVCDecoderConfigurationRecord(parsing: serialized)
                check(again == record, "record does not survive serialising")
            }
            _ = try? ParameterSetCache(configurationRecord: record)
            _ = FormatDescription(configurationRecord: record)
        }
        _ = try? AVCDecoderConfigurationRecord(extradata: bytes)
    }

    static func sps(_ bytes: [UInt8]) {
        let parsed = try? SequenceParameterSet(nalUnit: bytes)
        let elements = try? SequenceParameterSet.syntaxElements(nalUnit: bytes)
        check((parsed == nil) == (elements == nil), "SPS parse and dump disagree")
        if let sps = parsed {
            // Derived values must not trap.
            _ = (sps.codedWidth, sps.codedHeight, sps.cropRect, sps.displayWidth, sps.displayHeight)
            _ = (sps.frameRate, sps.profileName, sps.level, sps.scalingMatrix, sps.maxFrameNum, sps.maxPicOrderCntLsb)
            check(sps.displayWidth > 0 && sps.displayHeight > 0, "empty display size")
        }
    }

    static func pps(_ bytes: [UInt8]) {
        var spsById: [Int: SequenceParameterSet] = [:]
        let units = AnnexB.nalUnits(in: bytes).map { bytes[$0.range] }
        for unit in units where unit.first.map({ $0 & 0x1F }) == 7 {
            if let sps = try? SequenceParameterSet(nalUnit: unit) { spsById[sps.seqParameterSetId] = sps }
        }
        for unit in units where unit.first.map({ $0 & 0x1F }) == 8 {
            let parsed = try? PictureParameterSet(nalUnit: unit, sequenceParameterSets: spsById)
            let elements = try? PictureParameterSet.syntaxElements(nalUnit: unit, sequenceParameterSets: spsById)
            check((parsed == nil) == (elements == nil), "PPS parse and dump disagree")
            if let pps = parsed, let sps = spsById[pps.seqParameterSetId] {
                _ = pps.scalingMatrix(sequenceParameterSet: sps)
            }
            _ = try? PictureParameterSet(nalUnit: unit)
        }
    }

    static func slice(_ bytes: [UInt8]) {
        var cache = ParameterSetCache()
        for location in AnnexB.nalUnits(in: bytes) {
            let unit = bytes[location.range]
            switch unit.first.map({ $0 & 0x1F }) {
            case 7, 8:
                _ = try? cache.store(unit)
            default:
                let header = try? SliceHeader(nalUnit: unit, parameterSets: cache)
                if let header {
                    _ = header.startsNewPicture(after: header)
                    check(!header.startsNewPicture(after: header), "a slice starts a new picture after itself")
                }
                _ = try? SliceHeader.Prefix(nalUnit: unit)
                for id in 0..<4 { _ = cache.formatDescription(pictureParameterSetId: id) }
            }
        }
    }

    static func stream(_ bytes: [UInt8]) {
        // The first 8 bytes seed the chunk sizes; the rest is the stream.
        var seed: UInt64 = 0
        for byte in bytes.prefix(8) { seed = seed << 8 | UInt64(byte) }
        let stream = Array(bytes.dropFirst(8))
        let expected = AnnexB.nalUnits(in: stream).map { StreamNALUnit(bytes: Array(stream[$0.range]), streamOffset: $0.startCodeOffset) }
        var generator = seed
        var reader = AnnexBStreamReader()
        var got: [StreamNALUnit] = []
        var position = 0
        while position < stream.count {
            // xorshift: chunks of 1…64 bytes, sometimes up to 4 KiB.
            generator ^= generator << 13; generator ^= generator >> 7; generator ^= generator << 17
            let size = generator & 7 == 0 ? Int((generator >> 8) % 4096) + 1 : Int((generator >> 8) % 64) + 1
            let end = min(stream.count, position + size)
            if generator & 16 == 0 {
                reader.append(stream[position..<end])
            } else {
                stream[position..<end].withUnsafeBytes { reader.append(contentsOf: $0) }
            }
            position = end
            while let unit = reader.next() { got.append(unit) }
            check(reader.streamLength == position, "streamLength \(reader.streamLength) after \(position) bytes")
        }
        got += reader.finish()
        check(got == expected, "streamed units differ from whole-buffer parsing")
        let leading = AnnexB.firstStartCode(in: stream) ?? stream.count
        check(reader.skippedByteCount == leading, "skippedByteCount \(reader.skippedByteCount), expected \(leading)")
    }

    static func assembler(_ bytes: [UInt8]) {
        var assembler = AccessUnitAssembler()
        let locations = AnnexB.nalUnits(in: bytes)
        var units: [AccessUnit] = []
        for location in locations {
            if let unit = assembler.append(nalUnit: bytes[location.range], streamOffset: location.startCodeOffset) {
                units.append(unit)
            }
        }
        if let last = assembler.finish(streamLength: bytes.count) { units.append(last) }
        check(assembler.recentErrors.count <= AccessUnitAssembler.recentErrorLimit, "too many recent errors kept")
        var offset = 0
        var nalUnits: [ArraySlice<UInt8>] = []
        for unit in units {
            check(unit.streamOffset == offset, "access unit at \(unit.streamOffset), expected \(offset)")
            check(unit.nalUnitTypes.count == unit.nalUnits.count, "type count differs from unit count")
            offset += unit.byteCount
            nalUnits += unit.nalUnits
        }
        if !units.isEmpty { check(offset == bytes.count, "access units cover \(offset) of \(bytes.count) bytes") }
        // Every NAL unit is kept, in order, except damaged ones — garbage (forbidden_zero_bit set)
        // and slices whose header prefix cannot be read — which are dropped and reported.
        let kept = locations.map { bytes[$0.range] }.filter { unit in
            guard unit.first! & 0x80 == 0 else { return false }
            guard [1, 2, 5].contains(unit.first! & 0x1F) else { return true }
            return (try? SliceHeader.Prefix(nalUnit: unit)) != nil
        }
        check(nalUnits.elementsEqual(kept), "access units lose or reorder NAL units")
        check(assembler.errorCount >= locations.count - kept.count, "dropped damaged units not reported")
    }

    static func roundTrip(_ bytes: [UInt8]) {
        let original = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
        for size in [4, 2, 1] {
            for placement in [AVCC.ParameterSetPlacement.inBand, .configuration] {
                let converted: AVCC.ConversionResult
                do {
                    converted = try AVCC.fromAnnexB(bytes, lengthSize: size, parameterSets: placement)
                } catch {
                    check(error.code == .missingStartCode || error.code == .valueOutOfRange, "fromAnnexB: \(error)")
                    continue
                }
                let record = placement == .configuration ? try? converted.configurationRecord() : nil
                for style in [AnnexB.StartCodeStyle.minimal, .fourByte] {
                    let back: [UInt8]
                    do {
                        back = try AnnexB.fromAVCCStream(converted.data, lengthSize: size, parameterSets: record, startCodes: style)
                    } catch {
                        check(false, "AVCC made by fromAnnexB does not convert back: \(error)")
                        continue
                    }
                    let units = AnnexB.nalUnits(in: back).map { Array(back[$0.range]) }
                    if placement == .inBand {
                        check(units == original, "round trip at size \(size) changed the NAL units")
                    } else {
                        // Parameter sets may come back before IDR slices; everything else is kept.
                        let isParameterSet = { (unit: [UInt8]) in [7, 8, 13].contains(unit[0] & 0x1F) }
                        check(units.filter { !isParameterSet($0) } == original.filter { !isParameterSet($0) },
                              "round trip via avcC at size \(size) changed the slices")
                    }
                }
                if size == 4 && placement == .inBand {
                    var inPlace = converted.data
                    do {
                        try AnnexB.convertAVCCInPlace(&inPlace)
                    } catch {
                        check(false, "in-place conversion refused fromAnnexB output: \(error)")
                    }
                    check(AnnexB.nalUnits(in: inPlace).map { Array(inPlace[$0.range]) } == original,
                          "in-place round trip changed the NAL units")
                }
            }
        }
    }
}
