public import MediaCore

/// A silent AAC-LC track for a source without audio, made without an encoder: constant frames
/// of digital silence (``AACSilence``), 1024 samples each, laid on the source's timeline — what
/// streaming services that require an audio track (YouTube's "AAC-LC (audio required)") accept,
/// as users of video-only cameras otherwise add with an encoder.
///
/// Sans-I/O: give it each video frame's time and send the frames it returns first, so the audio
/// covers the video without running ahead of it.
public struct SilentAACTrack: Sendable {
    /// The track's format: AAC-LC at the sampling rate given, with the configuration's channels.
    public let format: AudioFormatDescription
    private let frame: [UInt8]
    /// The time of the next silent frame; nil before the first video time.
    private var next: Duration?
    private let frameDuration: Duration

    /// A silent track at `sampleRate` with `channelConfiguration` channels (1 or 2).
    ///
    /// - Parameters:
    ///   - sampleRate: the sampling frequency; default 48 kHz.
    ///   - channelConfiguration: 1 mono or 2 stereo; default 2.
    /// - Throws: `unsupported` for another channel configuration.
    public init(sampleRate: Int = 48_000, channelConfiguration: Int = 2) throws(MediaError) {
        frame = try AACSilence.frame(channelConfiguration: channelConfiguration)
        format = AudioSpecificConfig(samplingFrequency: sampleRate, channelConfiguration: channelConfiguration).formatDescription
        frameDuration = .seconds(1024) / sampleRate
    }

    /// The silent frames due up to `time` (the presentation time of a video frame about to be
    /// sent): from the first video time on, every frame whose start is at or before `time`.
    /// A jump back in time (a source that restarted) starts the track again there.
    ///
    /// - Parameter time: the video frame's presentation time.
    /// - Returns: the frames to send before it, in order.
    public mutating func frames(upTo time: Duration) -> [CompressedFrame] {
        guard var at = next, at <= time + frameDuration * 8 else {
            next = time + frameDuration
            return [CompressedFrame(data: frame, format: format, presentationTime: time)]
        }
        var output: [CompressedFrame] = []
        // A gap longer than a second (a paused source) is not filled frame by frame.
        if time - at > .seconds(1) { at = time }
        while at <= time {
            output.append(CompressedFrame(data: frame, format: format, presentationTime: at))
            at += frameDuration
        }
        next = at
        return output
    }
}
