public import MediaCore
public import H264
import HEVC

/// Video-only FLV files from Annex-B streams and back, with timestamps: the muxing layer over
/// H264's FLV tags (`FLVWriter`, `FLVReader`), as `h264 convert --to flv` and
/// `--to annexb` use it.
public enum FLVConversion {
    /// True when `bytes` begin with the FLV signature `FLV`.
    public static func isFLV(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x46, 0x4C, 0x56])
    }

    /// An Annex-B stream as a video-only FLV: `onMetaData` (size, frame rate, duration), a
    /// sequence header before the first picture and at
    /// each format change, one tag per access unit with decoding and presentation times derived
    /// from the picture order counts (so B-frames get their composition time), and an end of
    /// sequence tag. An H.265 stream (told from its NAL unit headers, `AnnexB.carriesHEVC`) is
    /// written in Enhanced RTMP `hvc1` tags whatever `syntax` says, its hvcC the sequence header.
    ///
    /// - Parameters:
    ///   - bytes: the Annex-B stream.
    ///   - frameRate: frames per second; `nil` takes the SPS's VUI timing, or 25
    ///     (`FrameRate.framesPerSecond(signalledBy:)`).
    ///   - syntax: legacy FLV or Enhanced RTMP tags.
    /// - Returns: the FLV file's bytes.
    /// - Throws: `missingParameterSet` when no picture comes with its SPS
    ///   and PPS; the errors of `FLVWriter`.
    public static func flv(fromAnnexB bytes: [UInt8], frameRate: Double?, syntax: FLVVideoTag.Syntax) throws(MediaError) -> [UInt8] {
        if AnnexB.carriesHEVC(bytes) { return try flv(fromHEVCAnnexB: bytes, frameRate: frameRate) }
        let pictures = AccessUnitAssembler.accessUnits(inAnnexB: bytes).filter(\.hasPicture)
        guard let first = pictures.first(where: { $0.formatDescription != nil })?.formatDescription else {
            throw MediaError(.missingParameterSet, field: "seq_parameter_set_rbsp", "no picture with its SPS and PPS in the stream")
        }
        let rate = frameRate ?? FrameRate.framesPerSecond(signalledBy: first.sequenceParameterSet)
        let times = timestamps(of: pictures, frameRate: rate)
        var writer = FLVWriter(syntax: syntax)
        // As FFmpeg's muxer: the duration ends one frame after the last presentation time.
        let end = Double(times.map(\.presentation).max() ?? 0) + 1000 / rate
        let size = first.dimensions
        try writer.appendMetadata(FLVMetadata(duration: end / 1000, width: size.width, height: size.height, frameRate: rate))
        var format: FormatDescription?
        for (index, unit) in pictures.enumerated() {
            // Pictures before the first SPS/PPS cannot be decoded by anyone: leave them out.
            guard let unitFormat = unit.formatDescription ?? format else { continue }
            if unitFormat != format {
                try writer.appendSequenceHeader(unitFormat, timestamp: times[index].decode)
                format = unitFormat
            }
            try writer.appendFrame(unit.data, isKeyframe: unit.isIDR, decodeTime: times[index].decode,
                                   presentationTime: times[index].presentation)
        }
        try writer.appendEndOfSequence(timestamp: times.last?.decode ?? 0)
        return writer.takeBytes()
    }

    /// Decoding and presentation times in milliseconds for access units in decoding order: the
    /// n-th in decoding order decodes at n frame durations; presentation order is the order of
    /// (coded video sequence, picture order count), shifted by the stream's largest reordering
    /// delay so that no picture is presented before it is decoded.
    ///
    /// - Parameters:
    ///   - units: the access units, in decoding order.
    ///   - frameRate: frames per second.
    /// - Returns: one pair of times per access unit, in the same order.
    public static func timestamps(of units: [AccessUnit], frameRate: Double) -> [(decode: Int64, presentation: Int64)] {
        var order = AccessUnitPictureOrder()
        return timestamps(pictureOrder: units.map { ($0.isIDR, order.picOrderCnt(of: $0)) }, frameRate: frameRate)
    }

    /// ``timestamps(of:frameRate:)`` of pictures given by whether each begins a coded video
    /// sequence (its picture order count restarts) and its picture order count, in decoding
    /// order: the rule both codecs share.
    static func timestamps(pictureOrder pictures: [(startsSequence: Bool, picOrderCnt: Int)],
                           frameRate: Double) -> [(decode: Int64, presentation: Int64)] {
        func milliseconds(_ frames: Int) -> Int64 { Int64((Double(frames) * 1000 / frameRate).rounded()) }
        return frameSlots(pictureOrder: pictures).map { (milliseconds($0.decode), milliseconds($0.presentation)) }
    }

    /// The rule of ``timestamps(pictureOrder:frameRate:)`` in frame durations: the n-th picture
    /// in decoding order decodes at slot n and is presented at its place in presentation order
    /// plus the stream's largest reordering delay (MP4 counts in these slots to be exact at
    /// any frame rate).
    static func frameSlots(pictureOrder pictures: [(startsSequence: Bool, picOrderCnt: Int)]) -> [(decode: Int, presentation: Int)] {
        var sequence = 0
        var keys: [(sequence: Int, count: Int, index: Int)] = []
        for (index, picture) in pictures.enumerated() {
            if picture.startsSequence && index > 0 { sequence += 1 }
            keys.append((sequence, picture.picOrderCnt, index))
        }
        var presentationIndex = [Int](repeating: 0, count: pictures.count)
        let sorted = keys.sorted { ($0.sequence, $0.count, $0.index) < ($1.sequence, $1.count, $1.index) }
        for (position, key) in sorted.enumerated() { presentationIndex[key.index] = position }
        let delay = zip(presentationIndex.indices, presentationIndex).map { $0 - $1 }.max() ?? 0
        return pictures.indices.map { index in (index, presentationIndex[index] + Swift.max(0, delay)) }
    }

    /// An FLV file's video as Annex-B: every access unit, with its format's parameter sets
    /// inserted (`VideoFormatDescription.annexB(fromSample:lengthSize:withParameterSets:)`): for
    /// H.264 the SPS and PPS before each IDR picture that lacks them (as FFmpeg's
    /// `h264_mp4toannexb`), for H.265 (`hvc1`) the hvcC's VPS, SPS and PPS before each IRAP
    /// picture (as `hevc_mp4toannexb`).
    ///
    /// - Parameter bytes: the FLV file.
    /// - Returns: the bytes, and the skipped tags and warnings in file order (with a
    ///   `missingParameterSet` when the file has no frames). A sequence header whose record does
    ///   not parse is a skipped tag, and so are the frames after it until a good one (they have
    ///   no format).
    /// - Throws: the fatal errors of `FLVReader.read(_:)`.
    public static func annexB(fromFLV bytes: [UInt8]) throws(MediaError) -> (bytes: [UInt8], diagnostics: [MediaError]) {
        var reader = try FLVReader(bytes)
        var output: [UInt8] = [], diagnostics: [MediaError] = [], frames = 0
        output.reserveCapacity(bytes.count)
        while let event = try reader.next() {
            switch event {
            case .frame(let frame):
                guard let format = frame.format else { continue }
                output += try format.annexB(fromSample: frame.data, lengthSize: 4, withParameterSets: true)
                frames += 1
            case .skippedTag(let error), .warning(let error): diagnostics.append(error)
            case .formatChanged, .endOfSequence: break
            }
        }
        if frames == 0 {
            return (output, diagnostics + [MediaError(.missingParameterSet, field: "VIDEODATA", "no H.264 or H.265 frames in the file")])
        }
        return (output, diagnostics)
    }
}
