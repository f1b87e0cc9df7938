import MediaContainers
public import MediaCore
public import NIOCore

/// An MP4 (or QuickTime) file played as a live source: its first video track and its first
/// audio track as ``LiveFrame``s, each handed out when it is due by its decoding time in the file
/// (`h264 relay FILE.mp4`), the way ``AnnexBFilePlayer`` plays an Annex-B file. The frames keep
/// the file's times (B-frames their composition offsets); with ``loops`` the file starts again
/// from the top when it ends, its times going on from where the last pass ended.
///
/// ```swift
/// let player = try MP4FilePlayer(path: "camera.mp4", loops: true)
/// for try await frame in player { broadcaster.broadcast(frame) }
/// ```
///
/// Each frame waits for its deadline on a ``Doorbell`` (an event loop's scheduled task); a player
/// that fell more than a second behind counts again from now rather than bursting. Cancelling
/// the task that iterates ends the sequence at once (nil).
public struct MP4FilePlayer: AsyncSequence, Sendable {
    /// The file's path.
    public let path: String
    /// True: start again from the top at the end of the file, forever.
    public let loops: Bool
    /// Where the frames' deadlines are scheduled; nil: one of NIO's shared event loops.
    public let eventLoop: (any EventLoop)?
    /// The format of the file's first video track.
    public let videoFormat: VideoFormatDescription
    /// The format of the file's first audio track; nil without one.
    public let audioFormat: AudioFormatDescription?
    private let trackIDs: Set<UInt32>

    /// A player of the MP4 file at `path`; its tracks are read at once.
    ///
    /// - Parameters:
    ///   - path: the MP4 or QuickTime file.
    ///   - loops: start again from the top at the end, forever.
    ///   - eventLoop: where the frames' deadlines are scheduled; nil: one of NIO's shared event loops.
    /// - Throws: the errors of MediaContainers' `MP4Reader` (`mp4FileError` for a file that
    ///   cannot be opened); `missingParameterSet` (field `stsd`) for a file without an H.264 or
    ///   H.265 track.
    public init(path: String, loops: Bool = false, eventLoop: (any EventLoop)? = nil) throws(MediaError) {
        let reader = try MP4Reader(source: try MP4FileSource(path: path))
        guard let video = reader.tracks.first(where: { $0.format?.video != nil }), let format = video.format?.video else {
            throw MediaError(.missingParameterSet, field: "stsd", "no H.264 or H.265 track in \(path)")
        }
        let audio = reader.tracks.first { $0.format?.audio != nil }
        (self.path, self.loops, self.eventLoop) = (path, loops, eventLoop)
        (videoFormat, audioFormat) = (format, audio?.format?.audio)
        trackIDs = Set([video.trackID] + (audio.map { [$0.trackID] } ?? []))
    }

    /// The frames, each when it is due.
    public func makeAsyncIterator() -> Iterator { Iterator(player: self) }

    /// Reads the file and paces its frames.
    public struct Iterator: AsyncIteratorProtocol {
        private let player: MP4FilePlayer
        private var reader: MP4Reader?
        private let timer: Doorbell
        /// The instant the first frame was due, and its decoding time.
        private var start: (instant: ContinuousClock.Instant, time: Duration)?
        /// Added to the file's times in this pass (zero in the first).
        private var offset = Duration.zero
        /// The file's first decoding time, and where this pass ends (the last decoding time of
        /// either track plus its last frame's duration), on the output's timeline.
        private var fileStart: Duration?
        private var passEnd = Duration.zero
        private var lastVideo: Duration?
        private var lastAudio: Duration?
        private var framesThisPass = 0

        init(player: MP4FilePlayer) {
            self.player = player
            timer = Doorbell(eventLoop: player.eventLoop)
        }

        /// The next frame once it is due; nil at the end of the file (without
        /// ``MP4FilePlayer/loops``) or when the task is cancelled.
        ///
        /// - Throws: the reader's errors (a file that cannot be read).
        public mutating func next() async throws -> LiveFrame? {
            while true {
                if reader == nil { reader = try MP4Reader(source: try MP4FileSource(path: player.path)) }
                guard let read = try reader?.next() else {
                    guard player.loops, framesThisPass > 0, let fileStart else { return nil }
                    (reader, framesThisPass) = (nil, 0)
                    offset = passEnd - fileStart
                    continue
                }
                guard player.trackIDs.contains(read.trackID) else { continue }
                var frame = read.frame
                if fileStart == nil { fileStart = frame.decodeTime }
                frame.decodeTime += offset
                frame.presentationTime += offset
                // The pass ends one frame interval after its last frame of either track, so the
                // next pass's frames follow both tracks' last ones.
                let isVideo = frame.videoFormat != nil
                let interval = (isVideo ? lastVideo : lastAudio).map { frame.decodeTime - $0 } ?? .zero
                passEnd = Swift.max(passEnd, frame.decodeTime + Swift.max(interval, .milliseconds(1)))
                if isVideo { lastVideo = frame.decodeTime } else { lastAudio = frame.decodeTime }
                framesThisPass += 1
                if start == nil { start = (.now, frame.decodeTime) }
                if let start {
                    let deadline = start.instant + (frame.decodeTime - start.time)
                    await timer.sleep(until: deadline)
                    if Task.isCancelled { return nil }
                    // Over a second behind: count again from now rather than burst.
                    if deadline < .now - .seconds(1) { self.start = (.now, frame.decodeTime) }
                }
                guard let live = LiveFrame(frame) else { continue }
                return live
            }
        }
    }
}
