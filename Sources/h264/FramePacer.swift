import H264
import H264Encoder
import H264Streaming

/// What the pacer asks of an encoder: `EncoderSession`, or a stand-in in tests.
protocol LiveEncoder: Sendable {
    /// Queues a frame (`EncoderSession.encode(_:presentationTimeStamp:duration:forceKeyframe:)`).
    func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration, forceKeyframe: Bool) throws
    /// Delivers every pending output and reports the encoder's last error (`EncoderSession.completeFrames()`).
    func completeFrames() throws
}

extension EncoderSession: LiveEncoder {}

/// The live loop of `h264 serve`: reads each frame, waits until it is due (``FrameSchedule``,
/// sleeping on a ``Doorbell`` that a viewer's IDR request or a stop rings), and hands it to the
/// encoder, whose output the broadcaster sends.
struct FramePacer<Source: ByteSource> {
    /// How the loop ended.
    enum Ending: Equatable {
        /// The input ended (and every frame was delivered, unless `error` says otherwise).
        case inputEnded
        /// A stop was asked for (SIGINT, SIGTERM).
        case stopped
        /// Reading or encoding failed (`error`).
        case failed
    }

    /// What ``run(encoder:)`` did.
    struct Outcome {
        /// Frames handed to the encoder.
        var frames: Int
        var ending: Ending
        /// The failure to report (exit status 1), the encoder's last error included.
        var error: (any Error)?
    }

    var reader: FrameReader<Source>
    /// Opens the input again when it ends (`--loop`); nil: the input plays once.
    let reopen: (() throws -> FrameReader<Source>)?
    var schedule: FrameSchedule
    let broadcaster: Broadcaster
    let doorbell: Doorbell
    let stop: StopSignal
    /// Called about once a second of frames (the priority follow-up of `h264 serve`).
    var everySecond: () -> Void = {}

    private let clock = ContinuousClock()

    init(reader: FrameReader<Source>, reopen: (() throws -> FrameReader<Source>)?, start: ContinuousClock.Instant = .now,
         broadcaster: Broadcaster, doorbell: Doorbell, stop: StopSignal) {
        self.reader = reader
        self.reopen = reopen
        let header = reader.header
        schedule = FrameSchedule(interval: .seconds(1) * header.frameRateDenominator / header.frameRateNumerator, start: start)
        self.broadcaster = broadcaster
        self.doorbell = doorbell
        self.stop = stop
    }

    /// Paces the input into `encoder` until the input ends, a stop is asked for, or something
    /// fails; when the input ended, completes the encoder's frames and reports its error.
    mutating func run(encoder: some LiveEncoder) async -> Outcome {
        let header = reader.header
        let framesPerSecond = max(1, Int(header.frameRate.rounded()))
        var index = 0
        var ending = Ending.stopped
        do {
            while !stop.isSet {
                guard let frame = try nextFrame(index: index) else {
                    ending = .inputEnded
                    break
                }
                guard await waitUntilDue() else { break }
                try encoder.encode(frame, presentationTimeStamp: schedule.interval * index, duration: schedule.interval,
                                   forceKeyframe: broadcaster.takeKeyframeRequest())
                index += 1
                if index % framesPerSecond == 0 { everySecond() }
                schedule.advance(now: clock.now)
            }
        } catch {
            return Outcome(frames: index, ending: .failed, error: error)
        }
        if ending == .inputEnded {
            // The last frames go out before the clients are closed; an error x264 reported
            // for them is the run's error.
            do {
                try encoder.completeFrames()
            } catch {
                return Outcome(frames: index, ending: .inputEnded, error: CLIError("encoding the last frames: \(error)"))
            }
        }
        return Outcome(frames: index, ending: ending, error: nil)
    }

    /// The next frame, from the start again at the end with `reopen`; nil at the end.
    private mutating func nextFrame(index: Int) throws -> VideoFrame? {
        let header = reader.header
        while true {
            if let bytes = try reader.nextFrame() {
                return try VideoFrame(pixelFormat: .i420, width: header.width, height: header.height, contiguous: bytes)
            }
            guard let reopen, reader.framesRead > 0 else {
                if index == 0 { throw CLIError("the input has no frames") }
                return nil
            }
            reader = try reopen()
            guard reader.header.width == header.width, reader.header.height == header.height else {
                throw CLIError("the input changed size between loops")
            }
        }
    }

    /// Sleeps until the next frame is due; false when a stop came first.
    private func waitUntilDue() async -> Bool {
        while !stop.isSet {
            let due = schedule.due(keyframeWanted: broadcaster.keyframeWanted)
            if clock.now >= due { return true }
            await doorbell.sleep(until: due)
        }
        return false
    }
}
