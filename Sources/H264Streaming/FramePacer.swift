/// What a ``FramePacer`` asks of a live encoder: H264Encoder's `EncoderSession` (the `h264`
/// tool declares the conformance), or a stand-in in tests. The pacer never names the
/// encoder's frame type: it hands on whatever its frame source gives.
public protocol LiveEncoder: Sendable {
    /// The picture the encoder takes (H264Encoder's `VideoFrame`).
    associatedtype Frame

    /// Queues a frame; `forceKeyframe` asks for an IDR (a viewer that just joined).
    ///
    /// - Parameters:
    ///   - frame: the picture.
    ///   - presentationTimeStamp: its time, one frame interval after the previous one.
    ///   - duration: the frame interval.
    ///   - forceKeyframe: true when a viewer asked for an IDR since the previous frame.
    func encode(_ frame: Frame, presentationTimeStamp: Duration, duration: Duration, forceKeyframe: Bool) throws

    /// Delivers every pending output and reports the encoder's last error.
    func completeFrames() throws
}

/// The live loop of a server: takes each frame from a source, waits until it is due
/// (``FrameSchedule``, sleeping on a ``Doorbell`` that a viewer's IDR request or a stop rings),
/// and hands it to a ``LiveEncoder``, asking for an IDR when the ``Broadcaster`` wants one. A
/// frame wanted as an IDR goes out at once instead of at its due time.
///
/// ```swift
/// var pacer = FramePacer(frameInterval: .milliseconds(40), broadcaster: broadcaster, doorbell: doorbell)
/// let outcome = await pacer.run(encoder: session, nextFrame: { try reader.next() }, isStopped: { stop.isSet })
/// ```
public struct FramePacer: Sendable {
    /// How ``run(encoder:nextFrame:isStopped:)`` ended.
    public enum Ending: Equatable, Sendable {
        /// The frame source ended (and every frame was delivered, unless ``Outcome/error`` says
        /// otherwise: then completing the last frames failed).
        case inputEnded
        /// `isStopped` returned true.
        case stopped
        /// The frame source or the encoder threw (``Outcome/error``).
        case failed
    }

    /// What ``run(encoder:nextFrame:isStopped:)`` did.
    public struct Outcome {
        /// Frames handed to the encoder.
        public var frames: Int
        /// How the loop ended.
        public var ending: Ending
        /// The failure: what the source or the encoder threw (``Ending/failed``), or the
        /// encoder's error when completing the last frames (``Ending/inputEnded``).
        public var error: (any Error)?
    }

    /// When each frame is due.
    public private(set) var schedule: FrameSchedule
    /// Where keyframe requests come from.
    public let broadcaster: Broadcaster
    /// Rung to wake the loop early: a keyframe request, or a stop.
    public let doorbell: Doorbell
    /// Called about once a second of frames (a server re-applying its thread priority, say).
    public var everySecond: @Sendable () -> Void = {}

    private let clock = ContinuousClock()

    /// A pacer for frames `frameInterval` apart, the first due at `start`.
    ///
    /// - Parameters:
    ///   - frameInterval: the source's frame duration.
    ///   - start: when the first frame is due.
    ///   - broadcaster: whose ``Broadcaster/takeKeyframeRequest()`` sets `forceKeyframe`.
    ///   - doorbell: the bell the broadcaster's keyframe requests and a stop ring.
    public init(frameInterval: Duration, start: ContinuousClock.Instant = .now, broadcaster: Broadcaster, doorbell: Doorbell) {
        schedule = FrameSchedule(interval: frameInterval, start: start)
        self.broadcaster = broadcaster
        self.doorbell = doorbell
    }

    /// Paces frames from `nextFrame` into `encoder` until the source ends (nil), `isStopped`
    /// says so, or something throws; when the source ended, completes the encoder's frames.
    ///
    /// - Parameters:
    ///   - encoder: the live encoder.
    ///   - nextFrame: the next frame, or nil at the end of the input.
    ///   - isStopped: checked before each frame and whenever the doorbell rings.
    /// - Returns: how many frames went to the encoder, how the loop ended and its error.
    public mutating func run<Encoder: LiveEncoder>(encoder: Encoder, nextFrame: () throws -> Encoder.Frame?,
                                                   isStopped: () -> Bool) async -> Outcome {
        let interval = schedule.interval
        let framesPerSecond = max(1, Int((Duration.seconds(1) / interval).rounded()))
        var index = 0
        var ending = Ending.stopped
        do {
            while !isStopped() {
                guard let frame = try nextFrame() else {
                    ending = .inputEnded
                    break
                }
                guard await waitUntilDue(isStopped) else { break }
                try encoder.encode(frame, presentationTimeStamp: interval * index, duration: interval,
                                   forceKeyframe: broadcaster.takeKeyframeRequest())
                index += 1
                if index % framesPerSecond == 0 { everySecond() }
                schedule.advance(now: clock.now)
            }
        } catch {
            return Outcome(frames: index, ending: .failed, error: error)
        }
        if ending == .inputEnded {
            // The last frames go out before the clients are closed; an error the encoder
            // reported for them is the run's error.
            do {
                try encoder.completeFrames()
            } catch {
                return Outcome(frames: index, ending: .inputEnded, error: error)
            }
        }
        return Outcome(frames: index, ending: ending, error: nil)
    }

    /// Sleeps until the next frame is due; false when a stop came first.
    private func waitUntilDue(_ isStopped: () -> Bool) async -> Bool {
        while !isStopped() {
            let due = schedule.due(keyframeWanted: broadcaster.keyframeWanted)
            if clock.now >= due { return true }
            await doorbell.sleep(until: due)
        }
        return false
    }
}
