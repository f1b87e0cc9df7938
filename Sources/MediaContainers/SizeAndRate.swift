public import H264

/// The one parser of picture sizes and frame rates, for the y4m header (`W`, `H`, `F`) and for a
/// command line's raw-input options (`--size WxH`, `--fps`): the same limits and the same error
/// codes for both.
public enum SizeAndRate {
    /// The largest width or height: 16384, as x264 and FFmpeg's y4m muxer accept.
    public static let maxDimension = 16_384
    /// The frame rates accepted, in frames per second.
    public static let frameRates: ClosedRange<Double> = 0.1...1000

    /// A width or height, 1…16384.
    ///
    /// - Parameters:
    ///   - text: the digits.
    ///   - field: the field named in the error (`W`, `--size`).
    ///   - what: how the message names it, directly followed by `text` (`width W`, `--size width `).
    /// - Throws: `H264.MediaError.Code.badDimension`.
    public static func dimension(_ text: Substring, field: String, _ what: String) throws(MediaError) -> Int {
        guard let value = Int(text), (1...maxDimension).contains(value) else {
            throw MediaError(.badDimension, field: field, "bad \(what)\(text) (1…\(maxDimension))")
        }
        return value
    }

    /// Checks that 4:2:0 can hold the size: an even width and height.
    ///
    /// - Parameters:
    ///   - width: the width in luma samples.
    ///   - height: the height in luma samples.
    ///   - field: the field named in the error.
    /// - Throws: `H264.MediaError.Code.badDimension`.
    public static func checkEven(width: Int, height: Int, field: String) throws(MediaError) {
        guard width % 2 == 0, height % 2 == 0 else {
            throw MediaError(.badDimension, field: field, "\(width)×\(height): 4:2:0 needs an even width and height")
        }
    }

    /// `WxH` (`--size`): both 1…16384 and even.
    ///
    /// - Parameter text: the option's value, e.g. `640x480`.
    /// - Throws: `H264.MediaError.Code.badDimension` with the field `--size`.
    public static func size(_ text: String) throws(MediaError) -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        do throws(MediaError) {
            guard parts.count == 2 else { throw MediaError(.badDimension, field: "--size", text) }
            let width = try dimension(parts[0], field: "--size", "--size width ")
            let height = try dimension(parts[1], field: "--size", "--size height ")
            try checkEven(width: width, height: height, field: "--size")
            return (width, height)
        } catch {
            throw MediaError(.badDimension, field: "--size", "bad --size \(text) (WxH, even, up to \(maxDimension))")
        }
    }

    /// A frame rate: `n<separator>d` with both 1…1000000, or, when `decimal` (`--fps`), a number
    /// (30, 29.97: thousandths kept); 0.1…1000 fps either way.
    ///
    /// - Parameters:
    ///   - text: the value.
    ///   - separator: `:` in y4m, `/` on a command line.
    ///   - decimal: whether a plain number is accepted too.
    ///   - field: the field named in the error (`F`, `--fps`).
    ///   - what: how the message names it, directly followed by `text` (`frame rate F`, `--fps `).
    /// - Throws: `H264.MediaError.Code.badFrameRate`.
    public static func rate(_ text: Substring, separator: Character, decimal: Bool, field: String, _ what: String)
        throws(MediaError) -> FrameRate {
        let parts = text.split(separator: separator, omittingEmptySubsequences: false)
        var rate: FrameRate?
        if parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), (1...1_000_000).contains(n), (1...1_000_000).contains(d) {
            rate = FrameRate(numerator: n, denominator: d)
        } else if decimal, parts.count == 1, let v = Double(text), v.isFinite, frameRates.contains(v) {
            rate = v == v.rounded() ? FrameRate(numerator: Int(v), denominator: 1)
                : FrameRate(numerator: Int((v * 1000).rounded()), denominator: 1000)
        }
        guard let rate, frameRates.contains(rate.framesPerSecond) else {
            let form = decimal ? "a number or N\(separator)D" : "n\(separator)d"
            throw MediaError(.badFrameRate, field: field,
                            "bad \(what)\(text) (\(form), \(formatted(frameRates.lowerBound))…\(formatted(frameRates.upperBound)) fps)")
        }
        return rate
    }

    private static func formatted(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
