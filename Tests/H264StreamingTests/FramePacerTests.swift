import H264
import H264Streaming
import NIOCore
import NIOEmbedded
import H264TestSupport
import Testing

/// The live pacing loop (`h264 serve`'s) with a stand-in encoder: what it does at the end of the
/// input, when a viewer asks for an IDR between two far-apart frames, and when a stop is asked for.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct FramePacerTests {
    /// Records what it was given; `completeFrames` fails when told to, as a session does with
    /// the last error x264 reported for a queued frame.
    final class RecordingEncoder: LiveEncoder {
        struct Call { var frame: Int; var pts: Duration; var forceKeyframe: Bool; var at: ContinuousClock.Instant }
        private let calls = Locked<[Call]>([])
        private let completed = Locked(0)
        let completionError: MediaError?
        /// Runs inside `encode` after recording (e.g. a viewer joins meanwhile).
        let onEncode: @Sendable (Int) -> Void

        init(completionError: MediaError? = nil, onEncode: @escaping @Sendable (Int) -> Void = { _ in }) {
            self.completionError = completionError
            self.onEncode = onEncode
        }

        func encode(_ frame: Int, presentationTimeStamp: Duration, duration: Duration, forceKeyframe: Bool) throws {
            let count = calls.withLock { calls in
                calls.append(Call(frame: frame, pts: presentationTimeStamp, forceKeyframe: forceKeyframe, at: .now))
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

    /// A source of `count` frames (their indices).
    final class Frames {
        var next = 0
        let count: Int
        init(_ count: Int) { self.count = count }
        func take() -> Int? {
            guard next < count else { return nil }
            next += 1
            return next - 1
        }
    }

    static func pacer(interval: Duration, broadcaster: Broadcaster? = nil, doorbell: Doorbell = Doorbell()) -> FramePacer {
        FramePacer(frameInterval: interval, broadcaster: broadcaster ?? Broadcaster(queueLimit: 8, onKeyframeRequest: doorbell.ring),
                   doorbell: doorbell)
    }

    /// Bug: serve called `try? session.completeFrames()` at the end of the input, so an error
    /// x264 reported for the last frames was lost and the server exited 0. It is the run's
    /// error now.
    @Test func theEncodersLastErrorIsReported() async throws {
        let encoder = RecordingEncoder(completionError: MediaError(MediaError.Code(rawValue: "encoderFailed"), field: "x264_encoder_encode"))
        var pacer = Self.pacer(interval: .milliseconds(1))
        let frames = Frames(3)
        let outcome = await pacer.run(encoder: encoder, nextFrame: frames.take, isStopped: { false })
        #expect(outcome.frames == 3 && encoder.encoded.count == 3)
        #expect(outcome.ending == .inputEnded)
        #expect(encoder.completions == 1)
        let error = try #require(outcome.error as? MediaError, "the completion error was dropped")
        #expect(error.field == "x264_encoder_encode")
    }

    /// The input ended cleanly: frames completed once, no error, time stamps one interval apart.
    @Test func theInputEndsWithCompletedFrames() async throws {
        let encoder = RecordingEncoder()
        var pacer = Self.pacer(interval: .milliseconds(1))
        let frames = Frames(3)
        let outcome = await pacer.run(encoder: encoder, nextFrame: frames.take, isStopped: { false })
        #expect(outcome.error == nil && outcome.ending == .inputEnded && encoder.completions == 1)
        #expect(encoder.encoded.map(\.pts) == [.zero, .milliseconds(1), .milliseconds(2)])
        #expect(encoder.encoded.map(\.frame) == [0, 1, 2])
    }

    /// A frame source that throws ends the loop as failed, with its error, without completing.
    @Test func aFailingSourceEndsTheLoop() async throws {
        let encoder = RecordingEncoder()
        var pacer = Self.pacer(interval: .milliseconds(1))
        let outcome = await pacer.run(encoder: encoder, nextFrame: { () throws -> Int? in throw MediaError(.invalidState) },
                                      isStopped: { false })
        #expect(outcome.ending == .failed && (outcome.error as? MediaError)?.code == .invalidState)
        #expect(outcome.frames == 0 && encoder.completions == 0)
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
        var pacer = Self.pacer(interval: .seconds(10), broadcaster: broadcaster, doorbell: doorbell)
        let frames = Frames(2)
        let started = ContinuousClock.now
        let outcome = await pacer.run(encoder: encoder, nextFrame: frames.take, isStopped: { false })
        #expect(outcome.frames == 2 && outcome.error == nil)
        #expect(encoder.encoded.map(\.forceKeyframe) == [false, true])
        let waited = encoder.encoded[1].at - started
        #expect(waited < .seconds(5), "the second frame waited \(waited) (its deadline was 10 s away)")
    }

    /// A stop asked for while the loop sleeps towards a far deadline ends it without encoding
    /// the frame that was waiting, and without completing (the server is stopping).
    @Test func aStopEndsTheWait() async throws {
        let doorbell = Doorbell()
        let stopped = Locked(false)
        let encoder = RecordingEncoder { count in
            if count == 1 {
                stopped.withLock { $0 = true }
                doorbell.ring()
            }
        }
        var pacer = Self.pacer(interval: .seconds(10), doorbell: doorbell)
        let frames = Frames(3)
        let outcome = await pacer.run(encoder: encoder, nextFrame: frames.take, isStopped: { stopped.withLock { $0 } })
        #expect(outcome.ending == .stopped && outcome.error == nil)
        #expect(encoder.encoded.count == 1 && encoder.completions == 0)
    }
}
