public import H264

/// The header line of a YUV4MPEG2 (`.y4m`) stream: what `ffmpeg -f yuv4mpegpipe` writes and
/// x264 reads.
///
/// Format: `YUV4MPEG2 W<width> H<height> F<num>:<den> I<p|t|b|m|?> A<num>:<den> C<colourspace>
/// X<extension>…` ending in `\n`, then for each frame a line starting with `FRAME` (with optional
/// parameters) and the frame's planes (``Y4MReader``).
///
/// ``parse(_:)`` accepts what the encoders take: 8-bit 4:2:0 — C420, C420jpeg, C420paldv,
/// C420mpeg2 (the chroma siting differs, the layout does not; no C tag means 420jpeg) — and
/// 10-bit 4:2:0, C420p10 (16-bit little-endian samples, for H.265 Main 10); progressive or
/// unknown interlacing; mono and 4:2:2/4:4:4 are refused as unsupported. ``line`` writes any header, including those of ``colourspace(chromaFormatIdc:bitDepth:)``.
public struct Y4MHeader: Hashable, Sendable {
    /// The width in luma samples (`W`).
    public var width: Int
    /// The height in luma samples (`H`).
    public var height: Int
    /// The frame rate's numerator (`F`; 30 when the header has none).
    public var frameRateNumerator: Int
    /// The frame rate's denominator (`F`).
    public var frameRateDenominator: Int
    /// The colourspace tag without its `C` (`420jpeg`, `422p10`, `mono` …).
    public var colorspace: String
    /// The sample aspect ratio's numerator (`A`; 0 for unknown).
    public var aspectNumerator: Int
    /// The sample aspect ratio's denominator (`A`; 0 for unknown).
    public var aspectDenominator: Int
    /// The `X` fields without their `X` (`YSCSS=420JPEG`, `COLORRANGE=FULL`), in order.
    public var extensions: [String]

    /// A header (interlacing is always written as progressive, `Ip`).
    ///
    /// - Parameters:
    ///   - width: the width in luma samples.
    ///   - height: the height in luma samples.
    ///   - frameRate: the frame rate.
    ///   - colorspace: the colourspace tag without its `C`.
    ///   - aspectRatio: the sample aspect ratio; `(0, 0)` for unknown.
    ///   - extensions: `X` fields without their `X`.
    public init(width: Int, height: Int, frameRate: FrameRate, colorspace: String = "420jpeg",
                aspectRatio: (width: Int, height: Int) = (0, 0), extensions: [String] = []) {
        self.width = width
        self.height = height
        frameRateNumerator = frameRate.numerator
        frameRateDenominator = frameRate.denominator
        self.colorspace = colorspace
        aspectNumerator = aspectRatio.width
        aspectDenominator = aspectRatio.height
        self.extensions = extensions
    }

    /// The frame rate (`F`).
    public var rate: FrameRate { FrameRate(numerator: frameRateNumerator, denominator: frameRateDenominator) }
    /// The frame rate in frames per second.
    public var frameRate: Double { rate.framesPerSecond }
    /// Bits per sample: 10 for `420p10`, else 8.
    public var bitDepth: Int { colorspace == "420p10" ? 10 : 8 }
    /// The bytes of one 4:2:0 frame's planes (I420; two bytes a sample at 10 bits): what
    /// ``Y4MReader`` reads per frame.
    public var frameBytes: Int { width * height * 3 / 2 * (bitDepth > 8 ? 2 : 1) }

    /// The colourspaces ``parse(_:)`` accepts: the 8-bit 4:2:0 ones and 10-bit 4:2:0.
    public static let accepted: Set<String> = ["420", "420jpeg", "420paldv", "420mpeg2", "420p10"]

    /// The header line, with its `\n`: `YUV4MPEG2 W… H… F…:… Ip A…:… C…` and the `X` fields,
    /// in the order FFmpeg's yuv4mpegpipe muxer writes them.
    public var line: String {
        var text = "YUV4MPEG2 W\(width) H\(height) F\(frameRateNumerator):\(frameRateDenominator) Ip "
        text += "A\(aspectNumerator):\(aspectDenominator) C\(colorspace)"
        for field in extensions { text += " X\(field)" }
        return text + "\n"
    }

    /// Parses the header line (without its `\n`).
    ///
    /// `A` is kept when it is `n:d`; `X` fields are kept; tags this reader does not know are
    /// ignored, as FFmpeg's y4m demuxer ignores them.
    ///
    /// - Throws: `H264.MediaError.Code.notY4M`, `H264.MediaError.Code.badDimension`,
    ///   `H264.MediaError.Code.missingDimension`, `H264.MediaError.Code.badFrameRate`,
    ///   `H264.MediaError.Code.unsupportedInterlacing`, `H264.MediaError.Code.unsupportedChroma`,
    ///   each naming its tag as the field.
    public static func parse(_ line: some Collection<UInt8>) throws(MediaError) -> Y4MHeader {
        let text = String(decoding: line, as: UTF8.self)
        var fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.first == "YUV4MPEG2" else {
            throw MediaError(.notY4M, field: "YUV4MPEG2", "not a y4m stream: the header must start with YUV4MPEG2")
        }
        fields.removeFirst()
        var width: Int?, height: Int?
        var header = Y4MHeader(width: 0, height: 0, frameRate: FrameRate(numerator: 30, denominator: 1))
        for field in fields {
            let tag = field.first!
            let value = field.dropFirst()
            switch tag {
            case "W":
                width = try SizeAndRate.dimension(value, field: "W", "width W")
            case "H":
                height = try SizeAndRate.dimension(value, field: "H", "height H")
            case "F":
                let rate = try SizeAndRate.rate(value, separator: ":", decimal: false, field: "F", "frame rate F")
                (header.frameRateNumerator, header.frameRateDenominator) = (rate.numerator, rate.denominator)
            case "I":
                guard value == "p" || value == "?" else {
                    throw MediaError(.unsupportedInterlacing, field: "I", "interlaced input I\(value) is not supported (progressive only)")
                }
            case "C":
                let c = String(value)
                guard accepted.contains(c) else {
                    throw MediaError(.unsupportedChroma, field: "C",
                                    "unsupported chroma format C\(c): only 4:2:0, 8-bit (420, 420jpeg, 420paldv, 420mpeg2) or 10-bit (420p10)")
                }
                header.colorspace = c
            case "A":
                let parts = value.split(separator: ":", omittingEmptySubsequences: false)
                if parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n >= 0, d >= 0 {
                    (header.aspectNumerator, header.aspectDenominator) = (n, d)
                }
            case "X":
                header.extensions.append(String(value))
            default:
                break
            }
        }
        guard let width else { throw MediaError(.missingDimension, field: "W", "the header has no width (W)") }
        guard let height else { throw MediaError(.missingDimension, field: "H", "the header has no height (H)") }
        try SizeAndRate.checkEven(width: width, height: height, field: "W")
        header.width = width
        header.height = height
        return header
    }
}
