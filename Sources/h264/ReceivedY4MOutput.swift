import Foundation
import H264
import H264Decoder

/// The decoded output of `h264 receive`: received access units decoded by a `DecoderSession`
/// (through `RTPDecoder`) as they arrive, the frames written as y4m (`Y4MFrameWriter`, as
/// `h264 decode` writes them), up to `frames` frames.
///
/// The y4m frame rate: the SPS's VUI timing when present; else the spacing of the first two
/// frames' RTP timestamps (in presentation order); else (a single frame) 30 fps.
final class ReceivedY4MOutput {
    private struct State {
        var written = 0
        var damaged = 0
        var error: String?
        var rate: FrameRate?
        /// The first frame, held until the second gives the rate (no VUI timing).
        var held: DecodedFrame?
        var y4m = Y4MFrameWriter(hint: "write Annex-B (-o FILE.h264) to keep such a stream")
    }

    private let out: FileHandle
    private let path: String
    private let state: Locked<State>
    private let session: DecoderSession
    private var decoder: RTPDecoder
    private let frames: Int?

    /// True once `frames` frames are written.
    var done: Bool {
        guard let frames else { return false }
        return state.withLock { $0.written >= frames }
    }

    /// Opens `path` ('-': standard output) and a decoder session.
    init(path: String, frames: Int?) throws {
        out = try CLIIO.openOutput(path)
        self.path = path
        self.frames = frames
        let state = Locked(State())
        self.state = state
        let descriptor = out.fileDescriptor
        session = try DecoderSession { frame in
            state.withLock { s in
                guard s.error == nil else { return }
                do {
                    if s.rate == nil {
                        if frame.duration > .zero {
                            s.rate = FrameRate(frameDuration: frame.duration)
                        } else if let held = s.held {
                            s.rate = Self.rate(from: held, to: frame)
                            s.held = nil
                            try Self.write(held, &s, frames: frames, to: descriptor, name: path)
                        } else {
                            s.held = frame
                            return
                        }
                    }
                    try Self.write(frame, &s, frames: frames, to: descriptor, name: path)
                } catch {
                    s.error = "\(error)"
                }
            }
        }
        decoder = RTPDecoder(session: session)
    }

    deinit {
        session.invalidate()
        if out !== FileHandle.standardOutput { try? out.close() }
    }

    /// Queues `received` for decoding (unless done).
    ///
    /// - Throws: an error of the output (a size change, a failed write) or of the session.
    func decode(_ received: RTPDepacketizer.ReceivedAccessUnit) throws {
        if let error = state.withLock({ $0.error }) { throw CLIError(error) }
        guard !done else { return }
        try decoder.decode(received)
    }

    /// Outputs the delayed frames, writes a frame still held for the rate, and returns the
    /// summary.
    ///
    /// - Throws: an error of the output or of the session.
    func finish() throws -> String {
        try decoder.finish()
        session.invalidate()
        let s = try state.withLock { (s) throws -> State in
            if s.error == nil, let held = s.held {
                s.rate = Self.fallbackRate
                s.held = nil
                do { try Self.write(held, &s, frames: frames, to: out.fileDescriptor, name: path) } catch { s.error = "\(error)" }
            }
            return s
        }
        if let error = s.error { throw CLIError(error) }
        var line = "decoded \(s.written) frames → \(path)"
        if s.damaged > 0 { line += ", \(s.damaged) damaged" }
        if decoder.skippedAccessUnitCount > 0 { line += ", \(decoder.skippedAccessUnitCount) access units before the first IDR skipped" }
        return line
    }

    /// Writes `frame` unless `frames` are written.
    private static func write(_ frame: DecodedFrame, _ s: inout State, frames: Int?, to descriptor: Int32, name: String) throws {
        if let frames, s.written >= frames { return }
        try writeAll(descriptor, s.y4m.bytes(of: frame, index: s.written, rate: s.rate ?? Self.fallbackRate), name: name)
        s.written += 1
        if frame.flags.contains(.damaged) { s.damaged += 1 }
    }

    /// The rate when neither the SPS nor the first two frames' times give one: 30 fps.
    private static let fallbackRate = FrameRate(numerator: 30, denominator: 1)

    /// The frame rate of two consecutive frames' presentation times, in whole 90 kHz ticks;
    /// 30 fps when they do not rise.
    private static func rate(from first: DecodedFrame, to second: DecodedFrame) -> FrameRate {
        let ticks = ((second.presentationTimeStamp - first.presentationTimeStamp) / .seconds(1) * Double(RTPDecoder.clockRate)).rounded()
        return ticks >= 1 ? FrameRate(approximating: Double(RTPDecoder.clockRate) / ticks) : fallbackRate
    }
}
