public import MediaContainers
public import MediaCore
import Synchronization

/// A recorder of the live fan-out: a ``LiveSink`` that writes the broadcaster's frames, video and
/// audio, to MP4 files with MediaContainers' `MP4Recorder` — fragmented while it records
/// (playable up to the last whole fragment after a crash), each file finalised with its index
/// at the front when it ends, a new file per segment, at a change of the video's format, and
/// with segments after a reconnection gap.
///
/// ```swift
/// let recorder = MP4RecorderSink(.init(path: "rec-%03d.mp4", segmentDuration: .seconds(600)))
/// let task = broadcaster.attach(recorder)      // records until the broadcaster closes
/// _ = try await task.value
/// print(recorder.summary.files)
/// ```
///
/// Like every sink it starts at a keyframe and, should the disk fall behind, is cut back to the
/// next keyframe rather than slowing the viewers (the skipped time stays in the file's
/// timeline). A file is finalised on the task that reads the frames: a long segment takes a
/// moment to rewrite.
public struct MP4RecorderSink: LiveSink {
    /// What a recorder has written so far.
    public struct Summary: Sendable, Hashable {
        /// Every file begun, in order.
        public var files: [String] = []
        /// Video frames written, in all files.
        public var videoFrames = 0
        /// Audio frames written, in all files.
        public var audioFrames = 0
    }

    /// Where and how the recorder writes.
    public let configuration: MP4Recorder.Configuration
    private let makeAudioConverter: (@Sendable (AudioFormatDescription) throws -> any AudioFrameConverting)?
    private let onEvent: @Sendable (MP4Recorder.Event) -> Void
    private let state = SummaryBox()

    /// What the recorder has written so far (its files and frames).
    public var summary: Summary { state.summary.withLock { $0 } }

    /// A recorder sink writing to `configuration`'s path.
    ///
    /// - Parameters:
    ///   - configuration: where and how it writes.
    ///   - audioConverter: makes the converter of an audio track MP4 cannot carry (G.711: pass
    ///     H264Decoder's `AudioConverter.init(from:bitRate:)`); nil: such a track is left out.
    ///   - onEvent: told of each file begun and finished and of the audio's fate.
    public init(_ configuration: MP4Recorder.Configuration,
                audioConverter: (@Sendable (AudioFormatDescription) throws -> any AudioFrameConverting)? = nil,
                onEvent: @escaping @Sendable (MP4Recorder.Event) -> Void = { _ in }) {
        self.configuration = configuration
        makeAudioConverter = audioConverter
        self.onEvent = onEvent
    }

    /// Records the frames until they end or the task is cancelled, then finishes (and
    /// finalises) the last file.
    ///
    /// - Parameter frames: the broadcaster's frames from a keyframe on.
    /// - Throws: the recorder's errors (a file that cannot be written); the last file is still
    ///   finished.
    public func consume(_ frames: LiveFrameStream) async throws {
        let state = self.state
        var recorder = MP4Recorder(configuration, audioConverter: makeAudioConverter, onEvent: onEvent)
        func publish() {
            state.summary.withLock { $0 = Summary(files: recorder.files, videoFrames: recorder.videoFrames, audioFrames: recorder.audioFrames) }
        }
        do {
            for await frame in frames {
                try recorder.write(frame)
                publish()
            }
        } catch {
            try? recorder.finish()
            publish()
            throw error
        }
        try recorder.finish()
        publish()
    }
}

/// The summary a sink's copies share.
private final class SummaryBox: Sendable {
    let summary = Mutex(MP4RecorderSink.Summary())
}
