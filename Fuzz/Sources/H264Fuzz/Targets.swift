import H264
import H264Media

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
    /// out whole, of the header's size, or as an `H264Error`; the same whatever the chunk sizes.
    case y4m
    /// `FLVReader` on the input as a file and, behind an FLV header, as tags: frames hold valid
    /// 4-byte AVCC inside the input, offsets are in it, the only fatal error is lost framing;
    /// streamed in chunks (sizes from the input's length) it gives the same events; the frames
    /// written again by `FLVWriter` read back the same.
    case flv
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
    /// `RTCPPacket.packets(in:)` (RTCPTarget.swift): never traps; receiver reports survive their bytes.
    case rtcp = "rtcp"

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
        case .rtp: Self.rtp(bytes)
        case .sdp: Self.sdp(bytes)
        case .decoder: Self.decoder(bytes)
        case .rtsp: Self.rtsp(bytes)
        case .wwwAuthenticate: Self.wwwAuthenticate(bytes)
        case .rtcp: Self.rtcp(bytes)
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

    static func y4m(_ bytes: [UInt8]) {
        let whole = readY4M(bytes, chunk: .max)
        if case .success(let frames) = whole {
            // Every frame is the header's size.
            check(frames.allSatisfy { $0.count == frames.first?.count }, "frames of different sizes")
        }
        // The same frames or the same error, whatever sizes the reads come in.
        let chunked = readY4M(bytes, chunk: bytes.count % 13 + 1)
        check(chunked == whole, "reads of \(bytes.count % 13 + 1) bytes gave \(chunked), whole reads \(whole)")
    }

    /// Up to 16 frames of a y4m stream pushed in chunks of `chunk` bytes, or how it was rejected.
    private static func readY4M(_ bytes: [UInt8], chunk: Int) -> Result<[[UInt8]], H264Error> {
        var reader = Y4MStreamReader()
        var frames: [[UInt8]] = []
        do throws(H264Error) {
            var start = 0
            repeat {
                let end = min(bytes.count, start + min(chunk, bytes.count - start))
                reader.append(bytes[start..<end])
                start = end
                if start == bytes.count { reader.finish() }
                while frames.count < 16, let frame = try reader.nextFrame() {
                    if let header = reader.header {
                        check(header.width > 0 && header.height > 0 && header.width % 2 == 0 && header.height % 2 == 0,
                              "header \(header.width)x\(header.height) accepted")
                        check(frame.count == header.frameBytes, "a frame of \(frame.count) bytes, expected \(header.frameBytes)")
                    }
                    frames.append(frame)
                }
            } while start < bytes.count && frames.count < 16
            return .success(frames)
        } catch {
            // A typed, described rejection: fine.
            return .failure(error)
        }
    }

    static func flv(_ bytes: [UInt8]) {
        for input in [bytes, [0x46, 0x4C, 0x56, 1, 1, 0, 0, 0, 9, 0, 0, 0, 0] + bytes] {
            // The same input streamed in chunks: the same events and the same fatal error.
            var streamed: [FLVReader.Event] = []
            var streamError: H264Error?
            var stream = FLVReader()
            let chunk = input.count % 13 + 1
            do {
                var start = 0
                while start < input.count {
                    stream.append(input[start..<Swift.min(start + chunk, input.count)])
                    start += chunk
                    while let event = try stream.next() { streamed.append(event) }
                }
                stream.finish()
                while let event = try stream.next() { streamed.append(event) }
            } catch {
                streamError = error
            }
            var whole: [FLVReader.Event] = []
            guard var reader = try? FLVReader(input) else {
                check(streamError != nil && streamed.isEmpty, "the stream accepted a header the file reader refused")
                continue
            }
            var frames: [FLVVideoFrame] = []
            var wholeError: H264Error?
            do {
                while let event = try reader.next() {
                    whole.append(event)
                    switch event {
                    case .frame(let frame):
                        let unit = frame.accessUnit
                        check(unit.streamOffset >= 9 && unit.streamOffset + unit.byteCount <= input.count, "frame outside the input")
                        let units = try? AVCC.nalUnits(in: unit.data, lengthSize: 4)
                        check(units?.count == unit.nalUnitTypes.count && units?.isEmpty == false, "frame data is not 4-byte AVCC")
                        frames.append(frame)
                    case .skippedTag(let error), .warning(let error):
                        check((error.byteOffset ?? -1) >= 0 && (error.byteOffset ?? -1) <= input.count, "offset of \(error)")
                    case .sequenceHeader, .endOfSequence:
                        break
                    }
                }
            } catch {
                check(error.code == .flvFramingLost, "unexpected fatal error \(error)")
                wholeError = error
            }
            check(streamed == whole && streamError == wholeError, "streaming in chunks of \(chunk) gave other events")
            check((try? reader.next()) == .some(nil), "events after the end")
            var writer = FLVWriter()
            var format: FormatDescription?
            do {
                for frame in frames {
                    if let next = frame.accessUnit.formatDescription, next != format {
                        var record = next.configurationRecord
                        record.lengthSizeMinusOne = 3
                        try writer.appendSequenceHeader(FormatDescription(configurationRecord: record), timestamp: frame.decodeTime)
                        format = next
                    }
                    try writer.append(FLVVideoTag(frameType: frame.frameType, packet: .codedFrames(data: frame.accessUnit.data,
                        compositionTime: frame.compositionTime), syntax: frame.syntax), timestamp: frame.decodeTime)
                }
                let again = try FLVReader.read(writer.bytes).frames
                check(again.map(\.accessUnit.data) == frames.map(\.accessUnit.data), "rewritten frames differ")
                check(again.map(\.presentationTime) == frames.map(\.presentationTime), "rewritten times differ")
            } catch {
                check(false, "writing what was read failed: \(error)")
            }
        }
    }

    static func rtp(_ bytes: [UInt8]) {
        // 1. Arbitrary packets, reorder window from the first byte.
        let configuration = RTPDepacketizer.Configuration(reorderWindow: Int(bytes.first ?? 0) % 8)
        var depacketizer = RTPDepacketizer(configuration: configuration)
        var twin = RTPZeroCopyDepacketizer(configuration: configuration)
        var position = 1
        var events = 0
        func drain() {
            while let event = depacketizer.next() {
                events += 1
                let other = twin.next()
                switch (event, other) {
                case (.accessUnit(let unit), .accessUnit(let view)?):
                    check(unit.accessUnit.nalUnits.count == unit.accessUnit.nalUnitTypes.count, "access unit with broken AVCC")
                    check(view.accessUnit.accessUnit == unit.accessUnit && view.timestamp == unit.timestamp
                          && view.accessUnit.encodedByteCount == unit.accessUnit.data.count, "zero-copy access unit differs")
                case (.loss(let loss), .loss(let twinLoss)?): check(loss == twinLoss, "zero-copy loss differs")
                case (.keyframeRequest, .keyframeRequest?): break
                case (.diagnostic(let error), .diagnostic(let twinError)?): check(error == twinError, "zero-copy diagnostic differs")
                default: check(false, "zero-copy depacketizer gave another event")
                }
            }
            if case .some = twin.next() { check(false, "zero-copy depacketizer gave more events") }
        }
        while position + 2 <= bytes.count {
            let length = min(Int(bytes[position]) << 8 | Int(bytes[position + 1]), bytes.count - position - 2)
            depacketizer.append(packet: Array(bytes[(position + 2)..<(position + 2 + length)]))
            twin.append(packet: (position + 2)..<(position + 2 + length), in: bytes)
            drain()
            position += 2 + length
        }
        depacketizer.finish()
        twin.finish()
        drain()
        check(depacketizer.lostPacketCount >= 0, "negative loss")

        // 2. The input as Annex-B, through the packetizer and back.
        let units = AccessUnitAssembler.accessUnits(inAnnexB: bytes)
        let mtu = 20 + 8 + 12 + 3 + Int(bytes.first ?? 0) * 4
        var packetizer = RTPPacketizer(configuration: .init(maximumTransmissionUnit: mtu, ssrc: 7, initialSequenceNumber: 65_000, initialTimestamp: 0))
        var receiver = RTPDepacketizer()
        var sent: [ArraySlice<UInt8>] = []
        var received: [ArraySlice<UInt8>] = []
        for (index, unit) in units.enumerated() {
            let packets: [[UInt8]]
            do {
                packets = try packetizer.packets(avcc: unit.data, presentationTime: .milliseconds(index))
            } catch {
                // Types 0 and 24–31 cannot travel in RTP; nothing else may be refused.
                check(error.code == .unsupported, "packetizer refused an assembled access unit: \(error)")
                return
            }
            for packet in packets {
                check(packet.count + 28 <= mtu, "a packet of \(packet.count) bytes over an MTU of \(mtu)")
                receiver.append(packet: packet)
            }
            sent += unit.nalUnits
        }
        receiver.finish()
        while let event = receiver.next() {
            switch event {
            case .accessUnit(let unit): received += unit.accessUnit.nalUnits
            default: break
            }
        }
        // Units with forbidden_zero_bit set are dropped by the assembler on both sides.
        check(received == sent.filter { $0.first! & 0x80 == 0 }, "packetize → depacketize changed the NAL units")
    }

    static func sdp(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        if var description = try? SessionDescription(parsing: text) {
            // What was tolerated is not written back: the text it writes reads without warnings.
            let again = try? SessionDescription(parsing: description.text)
            check(again?.warnings == [], "SDP text written here reads with warnings: \(again?.warnings ?? [])")
            description.warnings = []
            check(again == description, "SDP does not survive its own text: \(description)")
            _ = try? description.formatDescription()
        }
        if let decoded = try? Base64.decode(text) {
            check((try? Base64.decode(Base64.encode(decoded))) == decoded, "base64 round trip")
        }
    }

    static func rtsp(_ bytes: [UInt8]) {
        // The first byte's low bit picks a server's reader or a client's (which skips junk).
        let resynchronizing = (bytes.first ?? 0) & 1 == 1
        func read(chunk: Int) -> (messages: [RTSPMessageReader.Message], error: H264Error?) {
            var reader = RTSPMessageReader(limits: .init(maximumRequestLineSize: 256, maximumHeaderSize: 1024, maximumBodySize: 512),
                                           resynchronizing: resynchronizing)
            var messages: [RTSPMessageReader.Message] = []
            var offset = 0
            while offset < bytes.count {
                let end = offset + min(chunk, bytes.count - offset)
                reader.append(bytes[offset..<end])
                offset = end
                do {
                    while let message = try reader.next() { messages.append(message) }
                } catch {
                    check(reader.hasFailed, "a thrown reader must stay failed")
                    _ = RTSPStatus(for: error)
                    return (messages, error)
                }
            }
            return (messages, nil)
        }
        let whole = read(chunk: .max)
        let chunked = read(chunk: 1 + Int(bytes.first ?? 0) % 17)
        check(whole.messages == chunked.messages && whole.error?.code == chunked.error?.code, "chunking changed the messages")
        for case .response(let response) in whole.messages {
            check(response.header("Content-Length").flatMap { Int($0) } ?? 0 == response.body.count, "a response body of the wrong length")
        }
        for case .request(let request) in whole.messages {
            var again = RTSPMessageReader(limits: .init(maximumRequestLineSize: 4096, maximumHeaderSize: 8192, maximumBodySize: 512))
            again.append(request.bytes)
            check((try? again.next()) == .request(request), "a request does not read back from its own bytes")
            if let transport = request.header("Transport") {
                do {
                    for spec in try RTSPTransport.parseList(transport) {
                        check((try? RTSPTransport(parsing: spec.text)) == spec, "a transport does not read back")
                    }
                } catch {
                    check(error.code == .invalidTransport, "Transport threw \(error)")
                }
            }
        }
    }
}
