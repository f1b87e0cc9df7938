/// A YUV4MPEG2 (`.y4m`) stream: the header, then frames. What `ffmpeg -f yuv4mpegpipe`
/// writes and x264 reads.
///
/// Format: a header line `YUV4MPEG2 W<width> H<height> F<num>:<den> I<p|t|b|m|?>
/// A<num>:<den> C<colorspace> X<comment>…` ending in `\n`, then for each frame a line starting
/// with `FRAME` (with optional parameters) and the frame's planes. Only 8-bit 4:2:0 is
/// accepted (C420, C420jpeg, C420paldv, C420mpeg2 — the chroma siting differs, the layout does
/// not; no C tag means 420jpeg), progressive or unknown interlacing; mono and 4:2:2/4:4:4 are
/// rejected with a clear error. Parsing works on bytes and throws, so it can be fuzzed.
struct Y4MHeader: Equatable {
    var width: Int
    var height: Int
    var frameRateNumerator: Int
    var frameRateDenominator: Int
    var colorspace: String

    /// The frame rate in frames per second.
    var frameRate: Double { Double(frameRateNumerator) / Double(frameRateDenominator) }
    /// The bytes of one frame's planes (I420).
    var frameBytes: Int { width * height * 3 / 2 }

    static let accepted: Set<String> = ["420", "420jpeg", "420paldv", "420mpeg2"]

    /// Parses the header line (without its `\n`).
    static func parse(_ line: ArraySlice<UInt8>) throws(CLIError) -> Y4MHeader {
        let text = String(decoding: line, as: UTF8.self)
        var fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.first == "YUV4MPEG2" else { throw CLIError(.notY4M, "not a y4m stream: the header must start with YUV4MPEG2") }
        fields.removeFirst()
        var width: Int?, height: Int?
        var rate = (30, 1)
        var colorspace = "420jpeg"
        for field in fields {
            let tag = field.first!
            let value = field.dropFirst()
            switch tag {
            case "W":
                width = try SizeAndRate.dimension(value, "width W")
            case "H":
                height = try SizeAndRate.dimension(value, "height H")
            case "F":
                rate = try SizeAndRate.rate(value, separator: ":", decimal: false, "frame rate F")
            case "I":
                guard value == "p" || value == "?" else {
                    throw CLIError(.unsupportedInterlacing, "interlaced input I\(value) is not supported (progressive only)")
                }
            case "C":
                let c = String(value)
                guard accepted.contains(c) else {
                    throw CLIError(.unsupportedChroma, "unsupported chroma format C\(c): only 8-bit 4:2:0 (420, 420jpeg, 420paldv, 420mpeg2)")
                }
                colorspace = c
            default:
                // A (aspect), X (extensions) and tags this reader does not know are ignored,
                // as FFmpeg's y4m demuxer ignores them.
                break
            }
        }
        guard let width else { throw CLIError(.missingDimension, "the header has no width (W)") }
        guard let height else { throw CLIError(.missingDimension, "the header has no height (H)") }
        try SizeAndRate.checkEven(width: width, height: height)
        return Y4MHeader(width: width, height: height, frameRateNumerator: rate.0, frameRateDenominator: rate.1, colorspace: colorspace)
    }
}

