#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import MediaCore

/// Records a live stream — its video and its audio, in the order they come — to MP4 files that
/// survive a crash and scrub once closed: the frames are written as fragmented MP4 while they
/// come (``FragmentedMP4FileWriter``: a fragment per GOP or per ``Configuration/fragmentDuration``,
/// each written out whole, so after a crash or `kill -9` the file plays up to its last whole
/// fragment), and each file is finalised when it ends into a progressive MP4 with its index at
/// the front (``MP4Finalizing``).
///
/// From the first video keyframe on, times count from it. The audio track is the one seen in
/// the first second of video: AAC and Opus as they come, G.711 converted by the
/// ``AudioFrameConverting`` the program hands in (MP4 players take no G.711), left out without one.
///
/// A new file begins at a video keyframe:
/// - past ``Configuration/segmentDuration`` (the path is then a pattern: `rec-%03d.mp4`,
///   strftime fields too);
/// - when the video's format changes (a new SPS: a file has one initialization segment), or
///   its times step back (a source that started again);
/// - with segments, after a gap in the video of more than ``Configuration/maximumGap`` (a camera
///   that reconnected). Without segments such a gap stays in the file's timeline, its times
///   true: the picture before it lasts until the camera came back.
///
/// Without segments the later files are the path with `-2`, `-3` … before its extension. Each
/// file's times count from its own first keyframe. Not thread-safe: H264Streaming's
/// `MP4RecorderSink` runs one on the live fan-out, from one task.
///
/// ```swift
/// var recorder = MP4Recorder(.init(path: "camera.mp4"))
/// for frame in frames { try recorder.write(frame) }
/// try recorder.finish()
/// ```
public struct MP4Recorder {
    /// Where and how a recorder writes.
    public struct Configuration: Sendable, Hashable {
        /// The file's path, or with ``segmentDuration`` a pattern: its `%0Nd` field (`%03d`) is
        /// the file's number from 1, its strftime fields (`%Y`, `%m`, `%d`, `%H` …) the local
        /// time the file begins.
        public var path: String
        /// The length of one file: a new one begins at the first video keyframe past it. Nil: one file.
        public var segmentDuration: Duration?
        /// The longest fragment: what a recorder killed mid-GOP loses at most.
        public var fragmentDuration: Duration = .milliseconds(500)
        /// With segments, a gap in the video longer than this begins a new file.
        public var maximumGap: Duration = .seconds(2)
        /// False: each file is left fragmented when it ends (not rewritten with its index at the front).
        public var finalizes = true
        /// The path of an HLS playlist (`rec.m3u8`) listing every file's fragments by byte range,
        /// rewritten as each file ends (`EXT-X-PLAYLIST-TYPE:EVENT`), a VOD playlist once the
        /// recording ends, for a browser to play and scrub the whole recording. The files are
        /// then left fragmented (fragmented MP4 is HLS media: nothing is copied), and each file's
        /// times go on from where the one before ended (one timeline, which every player of the
        /// playlist follows). Nil: no playlist.
        public var vodPlaylist: String?

        /// True when each file is rewritten progressive as it ends: ``finalizes`` without a ``vodPlaylist``.
        public var rewritesFiles: Bool { finalizes && vodPlaylist == nil }

        /// A configuration writing to `path` (a pattern with `segmentDuration`).
        ///
        /// - Parameters:
        ///   - path: the file, or the pattern of the files.
        ///   - segmentDuration: the length of one file; nil: one file.
        public init(path: String, segmentDuration: Duration? = nil) {
            (self.path, self.segmentDuration) = (path, segmentDuration)
        }
    }

    /// What the recorder did that a program may want to say.
    public enum Event: Sendable, Hashable {
        /// A file was begun.
        case began(path: String)
        /// A file was finished (and finalised, unless ``Configuration/finalizes`` is false).
        case finished(path: String)
        /// The audio track is converted: MP4 takes no `codec`.
        case audioConverted(from: AudioCodec, to: AudioCodec)
        /// The audio track is left out, and why.
        case audioLeftOut(AudioCodec, reason: String)
    }

    /// How a recorder's audio converter is made for a track's format.
    public typealias AudioConverterFactory = (AudioFormatDescription) throws -> any AudioFrameConverting

    /// The configuration.
    public let configuration: Configuration
    private let makeAudioConverter: AudioConverterFactory?
    private let onEvent: (Event) -> Void
    /// The file being written (the last one, once finished); empty before the first.
    public private(set) var path = ""
    /// Every file begun, in order.
    public private(set) var files: [String] = []
    /// Video frames written, in all files.
    public private(set) var videoFrames = 0
    /// Audio frames written, in all files (after conversion).
    public private(set) var audioFrames = 0

    private var gate = KeyframeGate()
    private var origin: Duration?
    private var lastVideo: Duration?
    private var lastAudio: Duration?
    /// Frames from the first keyframe on, held until the audio track is known (its first frame,
    /// or a second of video without one).
    private var pending: [CompressedFrame] = []
    private var writer: FragmentedMP4FileWriter?
    /// The track formats of the file being written, kept for the next ones.
    private var formats: [MediaFormatDescription] = []
    private var converter: (any AudioFrameConverting)?
    /// The audio codecs already said to be converted or left out.
    private var saidAudio: Set<AudioCodec> = []
    /// The VOD playlist of ``Configuration/vodPlaylist``.
    private var playlist: HLSRecordingPlaylist?
    /// True when a discontinuity comes before the file being written (its formats or times changed).
    private var fileDiscontinuity = false

    /// A recorder that writes nothing until the first video keyframe.
    ///
    /// - Parameters:
    ///   - configuration: where and how it writes.
    ///   - audioConverter: makes the converter of an audio track MP4 cannot carry (G.711); nil:
    ///     such a track is left out.
    ///   - onEvent: told of each file begun and finished and of the audio's fate.
    public init(_ configuration: Configuration, audioConverter: AudioConverterFactory? = nil, onEvent: @escaping (Event) -> Void = { _ in }) {
        self.configuration = configuration
        makeAudioConverter = audioConverter
        self.onEvent = onEvent
        playlist = configuration.vodPlaylist.map(HLSRecordingPlaylist.init(path:))
    }

    /// Records `frame`: nothing before the first video keyframe; an audio frame before it, or
    /// one whose time does not advance, is dropped, as is a video frame whose time steps back
    /// (until the next keyframe, which begins a new file).
    ///
    /// - Parameter frame: a video frame (4-byte lengths) or an audio frame.
    /// - Throws: the MP4 writer's errors (`mp4FileError` for a file that cannot be written).
    public mutating func write(_ frame: CompressedFrame) throws(MediaError) {
        if frame.videoFormat != nil {
            // A frame after a step back in time, or of a new format, waits for the keyframe that begins a file.
            let fileFormats = writer?.formats ?? formats
            let stepsBack = lastVideo.map { frame.decodeTime <= $0 } ?? false
            if !frame.isKeyframe, stepsBack || !fileFormats.isEmpty && !fileFormats.contains(frame.format) { gate.close() }
            guard gate.admit(frame) else { return }
            if origin == nil { origin = frame.decodeTime }
            if frame.isKeyframe, writer != nil || !pending.isEmpty, beginsFile(frame) { try rotate(at: frame) }
            lastVideo = frame.decodeTime
        }
        guard let origin, frame.presentationTime >= origin else { return }
        for frame in try converted(frame) {
            var frame = frame
            frame.presentationTime -= origin
            frame.decodeTime -= origin
            if frame.audioFormat != nil {
                // Two audio frames at one time are refused by players: a step back is dropped.
                if let lastAudio, frame.presentationTime <= lastAudio { continue }
                lastAudio = frame.presentationTime
            }
            guard writer != nil else {
                pending.append(frame)
                if frame.audioFormat != nil || pendingVideoSpan >= .seconds(1) { try start() }
                continue
            }
            try append(frame)
        }
    }

    /// Ends the recording: the last fragment written and the file finalised (or the VOD
    /// playlist ended). A recording that never reached a keyframe writes no file.
    ///
    /// - Throws: the MP4 writer's and ``MP4Finalizing``'s errors.
    public mutating func finish() throws(MediaError) {
        if writer == nil && !pending.isEmpty { try start() }
        try finishFile()
        if let playlist, !playlist.files.isEmpty { try playlist.write(ended: true) }
    }

    /// True when the keyframe `frame` begins a new file (see the type's description).
    private func beginsFile(_ frame: CompressedFrame) -> Bool {
        let fileFormats = writer?.formats ?? formats
        if !fileFormats.isEmpty, !fileFormats.contains(frame.format) { return true }
        guard let lastVideo, let origin else { return false }
        if frame.decodeTime <= lastVideo { return true }
        guard let segmentDuration = configuration.segmentDuration else { return false }
        // A millisecond's slack: frame times rounded down (60 × 33.333 ms) still end a 2 s segment at 2 s.
        return frame.decodeTime - origin >= segmentDuration - .milliseconds(1) || frame.decodeTime - lastVideo > configuration.maximumGap
    }

    /// The video span of the pending frames.
    private var pendingVideoSpan: Duration {
        guard let first = pending.first(where: { $0.videoFormat != nil }),
              let last = pending.last(where: { $0.videoFormat != nil }) else { return .zero }
        return last.decodeTime - first.decodeTime
    }

    /// `frame`, or what the audio converter makes of it: none for a track left out.
    private mutating func converted(_ frame: CompressedFrame) throws(MediaError) -> [CompressedFrame] {
        guard let format = frame.audioFormat, format.codec == .pcmu || format.codec == .pcma else { return [frame] }
        if converter?.inputFormat != format {
            converter = nil
            guard let makeAudioConverter else {
                say(.audioLeftOut(format.codec, reason: "MP4 takes no \(format.codec.rawValue) and no converter was given"))
                return []
            }
            do {
                let made = try makeAudioConverter(format)
                converter = made
                say(.audioConverted(from: format.codec, to: made.outputFormat.codec))
            } catch {
                say(.audioLeftOut(format.codec, reason: "\(error)"))
                return []
            }
        }
        // A frame the converter cannot decode is skipped; the next converts as before.
        return (try? converter?.convert(frame)) ?? []
    }

    /// Tells `event` once per audio codec.
    private mutating func say(_ event: Event) {
        let codec: AudioCodec
        switch event {
        case .audioConverted(let from, _): codec = from
        case .audioLeftOut(let from, _): codec = from
        default: return onEvent(event)
        }
        if saidAudio.insert(codec).inserted { onEvent(event) }
    }

    /// Finishes the file being written and begins the next at `keyframe`, its times from it.
    private mutating func rotate(at keyframe: CompressedFrame) throws(MediaError) {
        if writer == nil && !pending.isEmpty { try start() }
        try finishFile()
        let jumps = lastVideo.map { keyframe.decodeTime <= $0 || keyframe.decodeTime - $0 > configuration.maximumGap } ?? false
        fileDiscontinuity = jumps || !formats.contains(keyframe.format)
        if let video = keyframe.videoFormat, !formats.contains(keyframe.format) {
            formats = formats.map { $0.video != nil ? .video(video) : $0 }
        }
        origin = keyframe.decodeTime
        lastAudio = nil
        try open(formats)
    }

    /// Opens the first file with the pending frames' formats (one video, the first audio) and writes them.
    private mutating func start() throws(MediaError) {
        formats = []
        if let video = pending.first(where: { $0.videoFormat != nil })?.format { formats.append(video) }
        if let audio = pending.first(where: { $0.audioFormat != nil })?.format { formats.append(audio) }
        try open(formats)
        let frames = pending
        pending = []
        for frame in frames { try append(frame) }
    }

    /// Begins the next file with `formats`.
    private mutating func open(_ formats: [MediaFormatDescription]) throws(MediaError) {
        path = configuration.segmentDuration != nil ? Self.path(forPattern: configuration.path, index: files.count + 1)
            : files.isEmpty ? configuration.path : Self.numbered(configuration.path, files.count + 1)
        files.append(path)
        // With a VOD playlist the files share one timeline: each goes on where the last ended.
        let options = FragmentedMP4Writer.Options(timelineStart: playlist?.duration ?? .zero)
        let writer = try FragmentedMP4FileWriter(path: path, formats: formats, options: options)
        writer.maximumFragmentDuration = configuration.fragmentDuration
        self.writer = writer
        onEvent(.began(path: path))
    }

    /// Writes the last fragment of the file being written and finalises it.
    private mutating func finishFile() throws(MediaError) {
        guard let writer else { return }
        self.writer = nil
        try writer.finish()
        if configuration.rewritesFiles { try MP4Finalizing.progressive(fromFragmented: writer.path) }
        if playlist != nil {
            playlist?.add(writer.path, initializationSize: writer.initializationSize, fragments: writer.fragments,
                          discontinuity: fileDiscontinuity)
            try playlist?.write(ended: false)
        }
        onEvent(.finished(path: writer.path))
    }

    private mutating func append(_ frame: CompressedFrame) throws(MediaError) {
        guard let writer else { return }
        // A track the file was not opened with (audio that started late), or a format that
        // changed where no file can begin, cannot be described by the file's one
        // initialization segment: left out.
        guard writer.formats.contains(frame.format) else { return }
        try writer.append(frame)
        if frame.videoFormat != nil { videoFrames += 1 } else { audioFrames += 1 }
    }

    /// `pattern` with its `%0Nd` field (`%03d`) as `index` and its strftime fields as the local time.
    ///
    /// - Parameters:
    ///   - pattern: a path pattern (``Configuration/path``).
    ///   - index: the file's number.
    /// - Returns: the path.
    public static func path(forPattern pattern: String, index: Int) -> String {
        var text = Array(pattern.utf8)
        // The first %0Nd field: the number, zero-padded to N digits (%d alone is strftime's day).
        var position = 0
        while position + 1 < text.count {
            guard text[position] == UInt8(ascii: "%") else { position += 1; continue }
            var end = position + 1
            var width = 0
            if text[end] == UInt8(ascii: "0") {
                end += 1
                while end < text.count, let digit = Self.digit(text[end]) { width = width * 10 + digit; end += 1 }
            }
            if end < text.count, text[end] == UInt8(ascii: "d"), width > 0 {
                let digits = Array(String(index).utf8)
                let number = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, min(width, 32) - digits.count)) + digits
                text.replaceSubrange(position...end, with: number)
                break
            }
            position = text[position + 1] == UInt8(ascii: "%") ? position + 2 : position + 1
        }
        guard text.contains(UInt8(ascii: "%")) else { return String(decoding: text, as: UTF8.self) }
        var now = time(nil), local = tm()
        localtime_r(&now, &local)
        var buffer = [CChar](repeating: 0, count: 4096)
        let format = String(decoding: text, as: UTF8.self)
        let count = strftime(&buffer, buffer.count, format, &local)
        return count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : format
    }

    /// `path` with `-index` before its extension: `rec.mp4` → `rec-2.mp4`.
    static func numbered(_ path: String, _ index: Int) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[slash...].lastIndex(of: "."), dot > slash else { return path + "-\(index)" }
        return String(path[..<dot]) + "-\(index)" + String(path[dot...])
    }

    private static func digit(_ byte: UInt8) -> Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
    }
}
