import ArgumentParser

/// A bit rate on the command line, written as FFmpeg's `-b:v` takes it: bits per second as a
/// plain number (`800000`) or with a suffix, `k`/`K` for thousands and `M` for millions
/// (`500k`, `800K`, `2M`, `1.5M`; `G` for billions). Lowercase `m` is refused: FFmpeg reads it
/// as milli, and a bit rate of 0.002 is never what was meant.
///
/// The one parser of every bit-rate option (`--bitrate`); options declare it with
/// `transform: BitRateArgument.init(parsing:)` so a bad value's error names the option, the
/// value and what is accepted.
struct BitRateArgument: Equatable, Sendable, ExpressibleByArgument, CustomStringConvertible {
    /// Bits per second, at least 1.
    var bitsPerSecond: Int

    /// Why a value is not a bit rate (ArgumentParser prints it after
    /// `The value 'V' is invalid for '--OPTION <OPTION>': `).
    struct ParseError: Error, CustomStringConvertible, Equatable {
        var description: String
    }

    /// What is accepted, for help texts and errors.
    static let syntax = "bits per second: 800000, 500k, 2M, 1.5M (k = 1000, M = 1000000)"

    init(bitsPerSecond: Int) { self.bitsPerSecond = bitsPerSecond }

    /// Parses `text` (`500k`, `2M`, `1.5M`, `800000`), or throws a ``ParseError`` saying why not.
    init(parsing text: String) throws {
        var digits = Substring(text), multiplier = 1.0
        switch text.last {
        case "k", "K": multiplier = 1e3
        case "M": multiplier = 1e6
        case "G": multiplier = 1e9
        case "m": throw ParseError(description: "m is milli as FFmpeg reads it: write M for megabits (\(Self.syntax))")
        default: break
        }
        if multiplier != 1 { digits = digits.dropLast() }
        let dots = digits.filter { $0 == "." }.count
        guard !digits.isEmpty, dots <= 1, digits != ".", digits.allSatisfy({ $0 == "." || ("0"..."9").contains($0) }),
              let number = Double(digits) else {
            throw ParseError(description: "not a bit rate; write \(Self.syntax)")
        }
        let value = (number * multiplier).rounded()
        guard value >= 1 else { throw ParseError(description: "a bit rate must be at least 1 bit per second") }
        guard value <= 1e12 else { throw ParseError(description: "more than 1000G bits per second") }
        bitsPerSecond = Int(value)
    }

    init?(argument: String) {
        guard let parsed = try? Self(parsing: argument) else { return nil }
        self = parsed
    }

    /// The rate as FFmpeg would print a round one: `2M`, `500k`, else the plain number.
    var description: String {
        if bitsPerSecond % 1_000_000 == 0 { return "\(bitsPerSecond / 1_000_000)M" }
        if bitsPerSecond % 1000 == 0 { return "\(bitsPerSecond / 1000)k" }
        return "\(bitsPerSecond)"
    }
}
