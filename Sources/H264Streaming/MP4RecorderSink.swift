public import MediaContainers
public import MediaCore
import Foundation
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
/// timeline). A file that ends is rewritten with its index at the front on a thread of its
/// own, while the next file records.
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
    /// finalises) the last file. A file that ends is finalised on a thread of its own while the
    /// next one records: neither the cooperative pool nor the recording waits for the rewrite.
    ///
    /// - Parameter frames: the broadcaster's frames from a keyframe on.
    /// - Throws: the recorder's errors (a file that cannot be written) and the finalising's;
    ///   the last file is still finished, and every file begun is finalised before it returns.
    public func consume(_ frames: LiveFrameStream) async throws {
        let state = self.state, onEvent = self.onEvent
        let finalizer = Finalizer(finalizes: configuration.rewritesFiles, onEvent: onEvent)
        var settings = configuration
        settings.finalizes = false
        var recorder = MP4Recorder(settings, audioConverter: makeAudioConverter) { event in
            if case .finished(let path) = event { finalizer.finalize(path) } else { onEvent(event) }
        }
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
            _ = try? await finalizer.finished()
            throw error
        }
        try recorder.finish()
        publish()
        try await finalizer.finished()
    }
}

/// The summary a sink's copies share.
private final class SummaryBox: Sendable {
    let summary = Mutex(MP4RecorderSink.Summary())
}

/// Finalises a recorder's files (`MP4Finalizing`) each on a thread of its own, and tells when
/// all are done.
private final class Finalizer: Sendable {
    private struct State {
        var running = 0
        var error: MediaError?
        var waiting: CheckedContinuation<Void, Never>?
    }

    private let finalizes: Bool
    private let onEvent: @Sendable (MP4Recorder.Event) -> Void
    private let state = Mutex(State())

    init(finalizes: Bool, onEvent: @escaping @Sendable (MP4Recorder.Event) -> Void) {
        (self.finalizes, self.onEvent) = (finalizes, onEvent)
    }

    /// Finalises the fragmented file at `path` (unless the recorder leaves its files
    /// fragmented), then tells `.finished(path:)`.
    func finalize(_ path: String) {
        guard finalizes else { return onEvent(.finished(path: path)) }
        state.withLock { $0.running += 1 }
        let thread = Thread { [self] in
            var failure: MediaError?
            do throws(MediaError) { try MP4Finalizing.progressive(fromFragmented: path) } catch { failure = error }
            if failure == nil { onEvent(.finished(path: path)) }
            let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.running -= 1
                if state.error == nil { state.error = failure }
                guard state.running == 0 else { return nil }
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?.resume()
        }
        thread.name = "mp4-finalize"
        thread.start()
    }

    /// Returns once every file handed over is finalised.
    ///
    /// - Throws: the first finalising error.
    func finished() async throws(MediaError) {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                guard state.running > 0 else { return true }
                state.waiting = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        if let error = state.withLock({ $0.error }) { throw error }
    }
}
