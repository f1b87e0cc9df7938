public import H264
import MediaContainers
public import RTP

/// Received RTP access units decoded as they arrive (a ``DecoderSession`` through an
/// ``RTPDecoder``) and handed on as y4m bytes (``Y4MFrameWriter``), up to a number of frames:
/// what `h264 receive -o FILE.y4m` writes.
///
/// The y4m frame rate: the SPS's VUI timing when present; else the spacing of the first two
/// frames' RTP timestamps (in presentation order); else (a single frame) 30 fps.
public final class RTPY4MWriter: Sendable {
    /// What the session's output handler shares with the caller.
    private struct State {
        var written = 0
        var damaged = 0
        var error: (any Error)?
        var rate: FrameRate?
        /// The first frame, held until the second gives the rate (no VUI timing).
        var held: DecodedFrame?
        var y4m = Y4MFrameWriter()
    }

    /// What ``finish()`` reports.
    public struct Summary: Sendable {
        /// Frames written.
        public var frames: Int
        /// Of those, frames libavcodec marked damaged.
        public var damaged: Int
        /// Access units before the first IDR, skipped.
        public var skippedAccessUnits: Int
    }

    private let state: Locked<State>
    private let session: DecoderSession
    private let decoder: Locked<RTPDecoder>
    private let frames: Int?
    private let write: @Sendable ([UInt8]) throws -> Void

    /// True once `frames` frames are written.
    public var done: Bool {
        guard let frames else { return false }
        return state.withLock { $0.written >= frames }
    }

    /// Opens a decoder session whose frames go to `write` as y4m bytes.
    ///
    /// - Parameters:
    ///   - frames: the most frames to write (nil: all).
    ///   - write: takes each frame's bytes (the stream header with the first), on the
    ///     session's queue; what it throws ends the output (reported by ``decode(_:)-(RTPDepacketizer.ReceivedAccessUnit)``, ``decode(_:)-(RTPReceivedFrame)`` and
    ///     ``finish()``).
    /// - Throws: an `MediaError` when the decoder cannot open.
    public init(frames: Int?, write: @escaping @Sendable ([UInt8]) throws -> Void) throws(MediaError) {
        self.frames = frames
        self.write = write
        let state = Locked(State())
        self.state = state
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
                            try Self.write(held, &s, frames: frames, write)
                        } else {
                            s.held = frame
                            return
                        }
                    }
                    try Self.write(frame, &s, frames: frames, write)
                } catch {
                    s.error = error
                }
            }
        }
        decoder = Locked(RTPDecoder(session: session))
    }

    deinit { session.invalidate() }

    /// Queues `received` for decoding (unless done).
    ///
    /// - Parameter received: the next access unit, in decoding order.
    /// - Throws: the first error of the output (a size change, what `write` threw) or of the session.
    public func decode(_ received: RTPDepacketizer.ReceivedAccessUnit) throws {
        if let error = state.withLock({ $0.error }) { throw error }
        guard !done else { return }
        try decoder.withLock { decoder throws(MediaError) in try decoder.decode(received) }
    }

    /// Queues a received frame of either codec for decoding (unless done).
    ///
    /// - Parameter received: the next frame, with its RTP timestamp, in decoding order.
    /// - Throws: the first error of the output (a size change, what `write` threw) or of the session.
    public func decode(_ received: RTPReceivedFrame) throws {
        if let error = state.withLock({ $0.error }) { throw error }
        guard !done else { return }
        try decoder.withLock { decoder throws(MediaError) in try decoder.decode(received) }
    }

    /// Outputs the delayed frames and writes a frame still held for the rate.
    ///
    /// - Returns: how many frames were written, damaged, and access units skipped.
    /// - Throws: the first error of the output or of the session.
    public func finish() throws -> Summary {
        try decoder.withLock { decoder throws(MediaError) in try decoder.finish() }
        session.invalidate()
        let s = state.withLock { (s) -> State in
            if s.error == nil, let held = s.held {
                s.rate = Self.fallbackRate
                s.held = nil
                do { try Self.write(held, &s, frames: frames, write) } catch { s.error = error }
            }
            return s
        }
        if let error = s.error { throw error }
        return Summary(frames: s.written, damaged: s.damaged, skippedAccessUnits: decoder.withLock { $0.skippedAccessUnitCount })
    }

    /// Writes `frame` unless `frames` are written.
    private static func write(_ frame: DecodedFrame, _ s: inout State, frames: Int?, _ write: ([UInt8]) throws -> Void) throws {
        if let frames, s.written >= frames { return }
        try write(s.y4m.bytes(of: frame, index: s.written, rate: s.rate ?? Self.fallbackRate))
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
