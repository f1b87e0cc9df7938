import H264

/// The one error of the command-line tool: a code to branch on and a one-line message for
/// people. Commands print it as `h264 COMMAND: error: MESSAGE` and exit with status 1.
///
/// Input problems (y4m syntax, `--size`, `--fps`) have a code of their own, so the malformed-
/// input catalogue and the fuzz target can check which problem was found; everything else
/// (usage, files, sockets, the encoder) is ``Code/usage`` or ``Code/bitstream``.
struct CLIError: Error, CustomStringConvertible, Equatable {
    /// What went wrong, for callers and tests that branch on it (the message is for people).
    enum Code: String, Equatable, Sendable {
        /// A command-line, file, socket or encoder problem outside the input's syntax.
        case usage
        /// A bitstream the library rejected (an `H264Error`, named with its file and offset).
        case bitstream
        /// No input at all.
        case emptyInput
        /// The first line does not start with `YUV4MPEG2`.
        case notY4M
        /// The header line has no `\n` within its size limit.
        case truncatedHeader
        /// No `W` or no `H` field.
        case missingDimension
        /// A width or height (y4m `W`/`H` or `--size`) out of range, or odd (4:2:0 needs even sizes).
        case badDimension
        /// A frame rate (y4m `F` or `--fps`) that is not `n:d` (`n/d` or a number for `--fps`)
        /// within 0.1…1000 fps.
        case badFrameRate
        /// A `C` field other than 8-bit 4:2:0.
        case unsupportedChroma
        /// An `I` field other than progressive or unknown.
        case unsupportedInterlacing
        /// A frame whose `FRAME` line does not end.
        case truncatedFrameHeader
        /// A frame that does not start with `FRAME`.
        case badFrameHeader
        /// The input ends inside a frame's planes.
        case truncatedFrame
    }

    var code: Code
    var description: String

    /// A usage, file or socket problem.
    init(_ description: String) { self.init(.usage, description) }

    init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// An input problem H264Media found (y4m syntax, `--size`, `--fps`): its code when the CLI
    /// has one of that name, its message as the description.
    init(input error: H264Error) {
        self.init(Code(rawValue: error.code.rawValue) ?? .bitstream, error.message)
    }

    /// Runs `body`, turning its `H264Error` into a ``init(input:)`` error.
    static func input<T>(_ body: () throws(H264Error) -> T) throws(CLIError) -> T {
        do {
            return try body()
        } catch {
            throw CLIError(input: error)
        }
    }

    /// `FILE: byte N: what` for bitstream errors.
    init(file: String, _ error: H264Error) {
        var text = "\(file)"
        if let offset = error.byteOffset { text += ": byte \(offset)" }
        var what = error
        what.byteOffset = nil
        text += ": \(what)"
        self.init(.bitstream, text)
    }
}
