import H264
import H264Decoder
import H264Streaming

/// The one error of the command-line tool: a code to branch on and a one-line message for
/// people. Commands print it as `h264 COMMAND: error: MESSAGE` and exit with status 1.
///
/// Input problems (y4m syntax, `--size`, `--fps`) carry the `MediaError` code H264Media gave
/// them (``Code/input(_:)``), so tests can check which problem was found; everything else
/// (usage, files, sockets, the encoder) is ``Code/usage`` or ``Code/bitstream``.
struct CLIError: Error, CustomStringConvertible, Equatable {
    /// What went wrong, for callers and tests that branch on it (the message is for people).
    enum Code: Equatable, Sendable {
        /// A command-line, file, socket or encoder problem outside the input's syntax.
        case usage
        /// A bitstream the library rejected (an `MediaError`, named with its file and offset).
        case bitstream
        /// An input H264Media refused: y4m syntax, `--size`, `--fps` (`notY4M`, `badDimension` …).
        case input(MediaError.Code)
    }

    var code: Code
    var description: String

    /// A usage, file or socket problem.
    init(_ description: String) { self.init(.usage, description) }

    init(_ code: Code, _ description: String) { (self.code, self.description) = (code, description) }

    /// An input problem H264Media found (y4m syntax, `--size`, `--fps`): its code, and its
    /// message as the description.
    init(input error: MediaError) { self.init(.input(error.code), error.message) }

    /// Runs `body`, turning its `MediaError` into a ``init(input:)`` error.
    static func input<T>(_ body: () throws(MediaError) -> T) throws(CLIError) -> T {
        do { return try body() } catch { throw CLIError(input: error) }
    }

    /// Runs `body`, turning an `MediaError` it throws (a y4m reader's) into a ``init(input:)``
    /// error; other errors (the source's) pass through.
    static func reading<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as MediaError { throw CLIError(input: error) }
    }

    /// Runs `body` (H264Decoder's `Y4MFrameWriter`), turning its y4m error into the message
    /// people read, ending in `hint` (how to keep such a stream); other errors pass through.
    static func y4m<T>(hint: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as MediaError where error.code == .y4mFormatChanged || error.code == .y4mUnsupportedPixelFormat {
            throw CLIError("\(error.message)\(error.code == .y4mFormatChanged ? "; " : ": ")\(hint)")
        }
    }

    /// Runs `body`, naming `file` in its error (``init(file:_:)``).
    static func named<T>(_ file: String, _ body: () throws(MediaError) -> T) throws(CLIError) -> T {
        do throws(MediaError) { return try body() } catch { throw CLIError(file: file, error) }
    }

    /// `FILE: byte N: what` for bitstream errors.
    init(file: String, _ error: MediaError) {
        var what = error
        what.byteOffset = nil
        self.init(.bitstream, file + (error.byteOffset.map { ": byte \($0)" } ?? "") + ": \(what)")
    }
}

/// Starts a listener, naming `what` in its error (`cannot listen for RTSP on …: …`; a bad `--listen` URL as that).
func listening<T>(_ what: String, _ start: () async throws -> T) async throws -> T {
    do { return try await start() } catch let error as RTSPClientError where error.code == .badURL { throw CLIError("--listen: \(error)") }
    catch { throw CLIError("cannot listen for \(what): \(error)") }
}
