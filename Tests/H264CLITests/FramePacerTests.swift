import H264
import H264Encoder
@testable import h264
import H264Streaming
import NIOCore
import NIOEmbedded
import Testing

/// `h264 serve`'s pacing loop with a stand-in encoder: what it does at the end of the input,
/// when a viewer asks for an IDR between two far-apart frames, and when a stop is asked for.
@Suite struct FramePacerTests {
    /// Records what it was given; `completeFrames` fails when told to, as a session does with
    /// the last error x264 reported for a queued frame.
    final class RecordingEncoder: LiveEncoder {
        struct Call { var pts: Duration; var forceKeyframe: Bool; var at: ContinuousClock.Instant }
        private let calls = Locked<[Call]>([])
        private let completed = Locked(0)
        let completionError: H264Error?
        /// Runs inside `encode` after recording (e.g. a viewer joins meanwhile).
        let onEncode: @Sendable (Int) -> Void

        init(completionError: H264Error? = nil, onEncode: @escaping @Sendable (Int) -> Void = { _ in }) {
            self.completionError = completionError
            self.onEncode = onEncode
        }

        func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration, forceKeyframe: Bool) throws {
            let count = calls.withLock { calls in
                calls.append(Call(pts: presentationTimeStamp, forceKeyframe: forceKeyframe, at: .now))
                return calls.count
            }
            onEncode(count)
        }

        func completeFrames() throws {
            completed.withLock { $0 += 1 }
            if let completionError { throw completionError }
        }

        var encoded: [Call] { calls.withLock { $0 } }
        var completions: Int { completed.withLock { $0 } }
    }

    /// `frames` 16×8 frames of y4m at `rate` (F value).
    static func reader(frames: Int, rate: String) throws -> FrameReader<BufferSource> {
        var bytes = Array("YUV4MPEG2 W16 H8 F\(rate)\n".utf8)
        for n in 0..<frames { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: UInt8(n), count: 16 * 8 * 3 / 2) }
        return try FrameReader(y4m: BufferSource(bytes: bytes))
    }

    static func pacer(_ reader: FrameReader<BufferSource>, broadcaster: Broadcaster? = nil, doorbell: Doorbell = Doorbell())
        -> (FramePacer<BufferSource>, StopSignal) {
        let stop = StopSignal(doorbell: doorbell)
        let pacer = FramePacer(reader: reader, reopen: nil,
                               broadcaster: broadcaster ?? Broadcaster(queueLimit: 8, onKeyframeRequest: doorbell.ring),
                               doorbell: doorbell, stop: stop)
        return (pacer, stop)
    }

    /// Bug: serve called `try? session.completeFrames()` at the end of the input, so an error
    /// x264 reported for the last frames was lost and the server exited 0. It is the run's
    /// error now (printed, exit status 1).
    @Test func theEncodersLastErrorIsReported() async throws {
        let encoder = RecordingEncoder(completionError: H264Error(.encoderFailed, field: "x264_encoder_encode"))
        var (pacer, _) = Self.pacer(try Self.reader(frames: 3, rate: "1000:1"))
        let outcome = await pacer.run(encoder: encoder)
        #expect(outcome.frames == 3 && encoder.encoded.count == 3)
        #expect(outcome.ending == .inputEnded)
        #expect(encoder.completions == 1)
        let error = try #require(outcome.error, "the completion error was dropped")
        #expect("\(error)".contains("x264_encoder_encode"), "\(error)")
    }

    /// The input ended cleanly: frames completed once, no error, time stamps one interval apart.
    @Test func theInputEndsWithCompletedFrames() async throws {
        let encoder = RecordingEncoder()
        var (pacer, _) = Self.pacer(try Self.reader(frames: 3, rate: "1000:1"))
        let outcome = await pacer.run(encoder: encoder)
        #expect(outcome.error == nil && outcome.ending == .inputEnded && encoder.completions == 1)
        #expect(encoder.encoded.map(\.pts) == [.zero, .milliseconds(1), .milliseconds(2)])
    }

    /// At 0.1 fps the second frame is due 10 s after the first; a viewer joining while the first
    /// is encoded rings the doorbell, and the second frame goes at once as a forced IDR (due one
    /// interval early) instead of at its deadline.
    @Test func aJoiningViewerPullsTheNextFrameForward() async throws {
        let doorbell = Doorbell()
        let broadcaster = Broadcaster(queueLimit: 8, onKeyframeRequest: doorbell.ring)
        let encoder = RecordingEncoder { count in
            // A viewer joins after the first frame was taken: a channel registered as serve's do.
            if count == 1 { _ = broadcaster.add(EmbeddedChannel()) }
        }
        var (pacer, _) = Self.pacer(try Self.reader(frames: 2, rate: "1:10"), broadcaster: broadcaster, doorbell: doorbell)
        let started = ContinuousClock.now
        let outcome = await pacer.run(encoder: encoder)
        #expect(outcome.frames == 2 && outcome.error == nil)
        #expect(encoder.encoded.map(\.forceKeyframe) == [false, true])
        let waited = encoder.encoded[1].at - started
        #expect(waited < .seconds(5), "the second frame waited \(waited) (its deadline was 10 s away)")
    }

    /// A stop asked for while the loop sleeps towards a far deadline ends it without encoding
    /// the frame that was waiting, and without completing (the server is stopping).
    @Test func aStopEndsTheWait() async throws {
        let doorbell = Doorbell()
        let stopper = Locked<StopSignal?>(nil)
        let encoder = RecordingEncoder { count in
            if count == 1 { stopper.withLock { $0?.set() } }
        }
        var (pacer, stop) = Self.pacer(try Self.reader(frames: 3, rate: "1:10"), doorbell: doorbell)
        stopper.withLock { $0 = stop }
        let outcome = await pacer.run(encoder: encoder)
        #expect(outcome.ending == .stopped && outcome.error == nil)
        #expect(encoder.encoded.count == 1 && encoder.completions == 0)
    }
}
