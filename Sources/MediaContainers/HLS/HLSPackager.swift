public import MediaCore

/// Packages a live stream into HLS (RFC 8216bis) on fragmented MP4 — CMAF initialization
/// segments, media segments cut at keyframes, and Low-Latency HLS partial segments, each its own
/// `moof` + `mdat` — and answers the player's playlist and file requests; sans-I/O: an HTTP
/// server (H264Streaming's `HLSServer`) holds the requests this says to wait on.
///
/// - **Segments** begin at a video keyframe once the one before has lasted
///   ``Configuration/segmentDuration`` (longer when the keyframes are further apart:
///   `EXT-X-TARGETDURATION` follows the longest).
/// - **Parts** (``Configuration/partDuration``, 200 ms by default) are cut before the video
///   frame that would take them past it, so no part is longer than `PART-TARGET` while the
///   source's frames are shorter than it. Audio (AAC, Opus) travels in the same fragments as
///   the video (one rendition); G.711 is left out (no HLS player takes it).
/// - **A new initialization segment** (`EXT-X-MAP`), after an `EXT-X-DISCONTINUITY`, begins at
///   the first keyframe after the video's format changes (a new SPS, a resolution switch), an
///   audio track appears or changes, or the source's times step back or jump by more than
///   ``Configuration/maximumGap`` (a camera that reconnected). The timeline goes on where it was.
/// - **The window**: the playlist lists the last ``Configuration/windowSegments`` segments; the
///   files of two more are kept for players still fetching them, nothing older: memory is
///   bounded by the window. A source without keyframes has its segment cut anyway at ten
///   times the target duration.
///
/// ```swift
/// var packager = HLSPackager()
/// for frame in frames {
///     if try packager.append(frame, wallClock: now) { wakeWaitingRequests() }
/// }
/// switch packager.playlist(for: HLSPlaylistRequest(query: "_HLS_msn=4&_HLS_part=2")) { … }
/// ```
public struct HLSPackager: Sendable {
    /// Choices of a packager.
    public struct Configuration: Sendable, Hashable {
        /// The target duration of a segment (2 s by default): a segment ends at the first keyframe past it.
        public var segmentDuration: Duration
        /// The longest partial segment (`PART-TARGET`, 200 ms by default); nil: plain HLS, no parts.
        public var partDuration: Duration?
        /// The segments the playlist lists (7 by default).
        public var windowSegments: Int
        /// A jump in the source's times longer than this begins a new segment after a discontinuity.
        public var maximumGap: Duration
        /// The whole segments the first playlist waits for (3 by default): players start three
        /// target durations from the end (RFC 8216bis §6.3.3), and Chromium's own player fails to
        /// start on fewer (`DEMUXER_ERROR_COULD_NOT_PARSE` with one or two).
        public var minimumSegments: Int

        /// A configuration of its parts.
        ///
        /// - Parameters:
        ///   - segmentDuration: the target duration of a segment.
        ///   - partDuration: the longest partial segment; nil for plain HLS.
        ///   - windowSegments: the segments the playlist lists (at least 1).
        ///   - maximumGap: a jump in time that begins a discontinuity.
        ///   - minimumSegments: the whole segments the first playlist waits for (at most the window).
        public init(segmentDuration: Duration = .seconds(2), partDuration: Duration? = .milliseconds(200), windowSegments: Int = 7,
                    maximumGap: Duration = .seconds(2), minimumSegments: Int = 3) {
            self.segmentDuration = segmentDuration
            self.partDuration = partDuration
            self.windowSegments = max(1, windowSegments)
            self.maximumGap = maximumGap
            self.minimumSegments = min(max(1, minimumSegments), self.windowSegments)
        }
    }

    /// The configuration.
    public let configuration: Configuration
    /// The complete segments whose files are kept: the window's and the two after it.
    public var keptSegmentCount: Int { segments.count }
    /// True once ``finish()`` has ended the stream (`EXT-X-ENDLIST`).
    public private(set) var isFinished = false
    /// The audio codec left out (G.711), if one was.
    public private(set) var leftOutAudio: AudioCodec?

    /// Complete segments, oldest first: the window and the two after it.
    var segments: [HLSSegment] = []
    /// The segment being written; nil before the first frame and after ``finish()``.
    var current: HLSSegment?
    /// Initialization segments by their number, those a kept segment needs.
    var initializations: [Int: [UInt8]] = [:]
    /// `EXT-X-TARGETDURATION`: the segment duration rounded up, or the longest segment's.
    var targetDuration: Int
    /// Discontinuities before the first kept segment (for `EXT-X-DISCONTINUITY-SEQUENCE`).
    var droppedDiscontinuities = 0
    /// True once a segment has left the window (the playlist is then not a VOD one).
    var hasDroppedSegments = false
    /// True once the playlist has held ``Configuration/minimumSegments`` whole segments: it is served from then on.
    var isServed = false

    private var writer: FragmentedMP4Writer?
    private var nextSequence = 0
    /// The number of the next initialization segment.
    var nextMap = 0
    /// The frames of the part being gathered, in the order they came.
    private var partFrames: [CompressedFrame] = []
    private var partStart: Duration?
    private var partIsIndependent = false
    private var lastVideoTime: Duration?
    private var lastVideoInterval: Duration?
    /// The last few frame intervals: a part is cut before the frame that would take it past
    /// `PART-TARGET` if the next interval is as long as the longest of them (a jittery camera).
    private var recentIntervals: [Duration] = []
    private var lastAudioTime: Duration?
    /// The source time the writer's timeline counts from (its first fragment's earliest presentation).
    private var sourceOrigin: Duration?
    /// The end of everything written, on the writers' timeline.
    private var timelineEnd: Duration = .zero
    /// Video frames wait for a keyframe (the start, or after a step back in time or a new format).
    private var waitsForKeyframe = true
    /// The next keyframe begins a new initialization segment after a discontinuity.
    private var restarts = false
    /// An audio track the initialization segment lacks came (or changed): the next keyframe
    /// begins one with it; the video goes on until then, the new audio waits.
    private var audioWantsMap = false

    /// A packager that writes nothing until the first video keyframe.
    ///
    /// - Parameter configuration: the segment and part durations and the window.
    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        targetDuration = Self.seconds(roundingUp: configuration.segmentDuration)
    }

    /// Takes the next frame of the stream: video (4-byte-length NAL units) in decoding order, audio
    /// (an AAC or Opus frame) as it comes. Nothing is written before the first video keyframe;
    /// audio that steps back in time is dropped.
    ///
    /// - Parameters:
    ///   - frame: the frame.
    ///   - wallClock: when it arrived, since 1970 (a segment's `EXT-X-PROGRAM-DATE-TIME`).
    /// - Returns: true when a part or segment was completed: waiting requests may be answered.
    /// - Throws: `mp4UnsupportedCodec` for a video format MP4 cannot carry; `invalidState` after ``finish()``.
    public mutating func append(_ frame: CompressedFrame, wallClock: Duration) throws(MediaError) -> Bool {
        guard !isFinished else { throw MediaError(.invalidState, field: "frame", "the HLS stream has finished") }
        if frame.videoFormat != nil { return try appendVideo(frame, wallClock: wallClock) }
        appendAudio(frame)
        return false
    }

    private mutating func appendVideo(_ frame: CompressedFrame, wallClock: Duration) throws(MediaError) -> Bool {
        let time = frame.decodeTime
        let stepsBack = lastVideoTime.map { time <= $0 } ?? false
        let jumps = lastVideoTime.map { time - $0 > configuration.maximumGap } ?? false
        let newFormat = writer.map { !$0.formats.contains(frame.format) } ?? partFrames.contains { $0.videoFormat != nil && $0.format != frame.format }
        if (stepsBack || jumps || newFormat || audioWantsMap && frame.isKeyframe) && current != nil { restarts = true }
        if restarts { audioWantsMap = false }
        if restarts || waitsForKeyframe {
            guard frame.isKeyframe else {
                waitsForKeyframe = true
                return false
            }
            waitsForKeyframe = false
        }
        var changed = false
        if let segment = current {
            let lasted = time - segment.start
            // A keyframe within half a frame of the target ends the segment (an encoder's times round down: 60 × 33 333 333 ns).
            // The interval to expect next: the longest of the last few, and this frame's own gap (the
            // only one known at a stream's second frame).
            let interval = max(recentIntervals.max() ?? .zero, lastVideoTime.map { time - $0 } ?? .zero)
            let slack = interval / 2
            if restarts || frame.isKeyframe && lasted + slack >= configuration.segmentDuration || lasted >= configuration.segmentDuration * 10 {
                changed = try closeSegment(before: restarts ? nil : frame)
            } else if let partDuration = configuration.partDuration, let partStart, interval > .zero,
                      time - partStart + interval > partDuration + .microseconds(500) {
                changed = try closePart(before: frame)
            }
        }
        if restarts {
            restarts = false
            writer = nil
            sourceOrigin = nil
            lastVideoInterval = nil
            recentIntervals = []
            lastAudioTime = nil
            startSegment(at: frame, wallClock: wallClock, discontinuity: true)
        } else if current == nil {
            startSegment(at: frame, wallClock: wallClock, discontinuity: false)
        } else if let last = lastVideoTime, time > last {
            lastVideoInterval = time - last
            recentIntervals.append(time - last)
            if recentIntervals.count > 8 { recentIntervals.removeFirst() }
        }
        if partStart == nil {
            partStart = time
            partIsIndependent = frame.isKeyframe
        }
        lastVideoTime = time
        partFrames.append(frame)
        return changed
    }

    private mutating func appendAudio(_ frame: CompressedFrame) {
        guard current != nil, !restarts, !audioWantsMap, !waitsForKeyframe, let audio = frame.audioFormat else { return }
        guard audio.codec == .aac || audio.codec == .opus else {
            leftOutAudio = audio.codec
            return
        }
        if let writer {
            if !writer.formats.contains(frame.format) {
                audioWantsMap = true  // at the next keyframe, an initialization segment with this track
                return
            }
        } else if partFrames.contains(where: { $0.audioFormat != nil && $0.format != frame.format }) {
            return
        }
        if let lastAudioTime, frame.decodeTime <= lastAudioTime { return }
        if let sourceOrigin, frame.presentationTime < sourceOrigin { return }
        lastAudioTime = frame.decodeTime
        partFrames.append(frame)
    }

    /// Ends the stream: the last part and segment are completed, and the playlist ends with
    /// `EXT-X-ENDLIST` (a VOD playlist when no segment has left the window).
    ///
    /// - Throws: the fragment writer's errors.
    public mutating func finish() throws(MediaError) {
        guard !isFinished else { return }
        if current != nil { _ = try closeSegment(before: nil) }
        isFinished = true
    }

    private mutating func startSegment(at frame: CompressedFrame, wallClock: Duration, discontinuity: Bool) {
        current = HLSSegment(sequence: nextSequence, map: writer == nil ? nextMap : nextMap - 1, discontinuity: discontinuity,
                             programDateTime: wallClock, start: frame.decodeTime, isIndependent: frame.isKeyframe)
        nextSequence += 1
    }

    /// Writes the gathered frames as the current segment's next part, cut before `next`.
    private mutating func closePart(before next: CompressedFrame?) throws(MediaError) -> Bool {
        guard var segment = current, let partStart, !partFrames.isEmpty else { return false }
        current = nil  // the segment's bytes grow in place below (not copied), and it is put back
        defer { if current == nil { current = segment } }  // also when a write throws: nothing accepted is lost
        if writer == nil {
            var formats = [partFrames.first { $0.videoFormat != nil }?.format].compactMap { $0 }
            if let audio = partFrames.first(where: { $0.audioFormat != nil }) { formats.append(audio.format) }
            var options = FragmentedMP4Writer.Options()
            options.timelineStart = timelineEnd
            let made = try FragmentedMP4Writer(formats: formats, options: options)
            writer = made
            sourceOrigin = partFrames.map(\.presentationTime).min()
            initializations[nextMap] = try made.initializationSegment()
            segment.map = nextMap
            nextMap += 1
        }
        for frame in partFrames { _ = try writer?.append(frame) }
        let bytes = try writer?.fragment(before: next) ?? []
        let end = next?.decodeTime ?? (lastVideoTime ?? partStart) + (lastVideoInterval ?? .milliseconds(40))
        segment.parts.append(HLSSegment.Part(range: segment.bytes.count..<segment.bytes.count + bytes.count,
                                             duration: end - partStart, isIndependent: partIsIndependent))
        if segment.bytes.isEmpty { segment.bytes = bytes } else { segment.bytes += bytes }
        if let sourceOrigin {
            let interval = lastVideoInterval ?? .milliseconds(40)
            let ends = partFrames.map { $0.presentationTime + ($0.audioFormat != nil ? Self.frameDuration(of: $0) : interval) }
            timelineEnd = max(timelineEnd, (ends.max() ?? end) - sourceOrigin + (writerTimelineStart ?? .zero))
        }
        current = segment
        partFrames = []
        self.partStart = nil
        return true
    }

    /// Where the writer's timeline starts.
    private var writerTimelineStart: Duration? { writer?.options.timelineStart }

    /// Completes the current segment (its last part cut before `next`) and slides the window.
    private mutating func closeSegment(before next: CompressedFrame?) throws(MediaError) -> Bool {
        _ = try closePart(before: next)
        guard var segment = current else { return false }
        current = nil
        guard !segment.parts.isEmpty else { return false }
        segment.duration = segment.partsDuration
        targetDuration = max(targetDuration, Self.seconds(roundingUp: segment.partsDuration))
        segments.append(segment)
        if segments.count >= configuration.minimumSegments { isServed = true }
        while segments.count > configuration.windowSegments + 2 {
            if segments.removeFirst().discontinuity { droppedDiscontinuities += 1 }
            hasDroppedSegments = true
        }
        let oldestMap = segments.first?.map ?? segment.map
        initializations = initializations.filter { $0.key >= oldestMap }
        return true
    }

    /// The duration of an audio frame: its codec frame (AAC: 1024 samples; Opus: 20 ms).
    private static func frameDuration(of frame: CompressedFrame) -> Duration {
        guard let audio = frame.audioFormat, audio.sampleRate > 0 else { return .zero }
        let samples = audio.samplesPerFrame ?? (audio.codec == .opus ? audio.sampleRate / 50 : 1024)
        return .seconds(Double(samples) / Double(audio.sampleRate))
    }

    /// `duration` in whole seconds, rounded up (a millisecond's slack for clock rounding).
    static func seconds(roundingUp duration: Duration) -> Int {
        let milliseconds = Int(duration / .milliseconds(1))
        return max(1, (milliseconds - 1 + 999) / 1000)
    }
}
