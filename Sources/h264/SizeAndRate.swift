/// The one parser of picture sizes and frame rates, for the y4m header (`W`, `H`, `F`) and for
/// raw input's `--size WxH` and `--fps`: the same limits and the same error codes for both.
enum SizeAndRate {
    /// The largest width or height: 16384, as x264 and FFmpeg's y4m muxer accept.
    static let maxDimension = 16_384
    /// The frame rates accepted, in frames per second.
    static let frameRates: ClosedRange<Double> = 0.1...1000

    /// A width or height, 1…16384 (`what` names it in the message: `width W`, `--size`).
    static func dimension(_ text: Substring, _ what: String) throws(CLIError) -> Int {
        guard let value = Int(text), (1...maxDimension).contains(value) else {
            throw CLIError(.badDimension, "bad \(what)\(text) (1…\(maxDimension))")
        }
        return value
    }

    /// Checks that 4:2:0 can hold the size: even width and height.
    static func checkEven(width: Int, height: Int) throws(CLIError) {
        guard width % 2 == 0, height % 2 == 0 else {
            throw CLIError(.badDimension, "\(width)×\(height): 4:2:0 needs an even width and height")
        }
    }

    /// `WxH` (`--size`): both 1…16384 and even.
    static func size(_ text: String) throws(CLIError) -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        do throws(CLIError) {
            guard parts.count == 2 else { throw CLIError(.badDimension, text) }
            let width = try dimension(parts[0], "--size width ")
            let height = try dimension(parts[1], "--size height ")
            try checkEven(width: width, height: height)
            return (width, height)
        } catch {
            throw CLIError(.badDimension, "bad --size \(text) (WxH, even, up to \(maxDimension))")
        }
    }

    /// A frame rate as numerator and denominator: `n<separator>d` with both 1…1000000, or, when
    /// `decimal` (`--fps`), a number (30, 29.97: thousandths kept); 0.1…1000 fps either way.
    static func rate(_ text: Substring, separator: Character, decimal: Bool, _ what: String)
        throws(CLIError) -> (numerator: Int, denominator: Int) {
        let parts = text.split(separator: separator, omittingEmptySubsequences: false)
        var rate: (Int, Int)?
        if parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), (1...1_000_000).contains(n), (1...1_000_000).contains(d) {
            rate = (n, d)
        } else if decimal, parts.count == 1, let v = Double(text), v.isFinite, frameRates.contains(v) {
            rate = v == v.rounded() ? (Int(v), 1) : (Int((v * 1000).rounded()), 1000)
        }
        guard let rate, frameRates.contains(Double(rate.0) / Double(rate.1)) else {
            let form = decimal ? "a number or N\(separator)D" : "n\(separator)d"
            throw CLIError(.badFrameRate, "bad \(what)\(text) (\(form), \(formatted(frameRates.lowerBound))…\(formatted(frameRates.upperBound)) fps)")
        }
        return rate
    }

    private static func formatted(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
