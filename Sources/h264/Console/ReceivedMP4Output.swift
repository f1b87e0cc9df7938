import Foundation
import H264Decoder
import MediaContainers
import MediaCore

/// `h264 receive … -o FILE.mp4`: both tracks recorded as fragmented MP4 while they come (a
/// fragment per GOP or per half second, each written out whole: after a crash or `kill -9` the
/// file plays up to its last whole fragment), finalised on a clean stop into a progressive MP4 with its index at the
/// front (`MP4Finalizing`), which players scrub. From the first video keyframe on, times from
/// it; the audio track is the one seen in the first second (AAC and Opus as they are, G.711
/// converted to AAC-LC: MP4 players take no G.711).
///
/// With a segment duration, the path is a pattern (`rec-%03d.mp4`, or strftime fields): a new
/// file begins at the first video keyframe past the duration, and at a change of the video's
/// format; each file is finalised when the next begins, times from its own first keyframe.
struct ReceivedMP4Output {
    let pattern: String
    let segmentDuration: Duration?
    let log: (String) -> Void
    /// The file being written (the last one, once finished).
    private(set) var path: String
    /// Every file begun, in order.
    private(set) var files: [String] = []
    private var gate = KeyframeGate()
    private var origin: Duration?
    /// Frames from the first keyframe on, held until the audio track is known (its first frame,
    /// or a second of video without one).
    private var pending: [CompressedFrame] = []
    private var writer: FragmentedMP4FileWriter?
    private var converter: AudioConverter?
    private var lastAudio: Duration?
    private(set) var videoFrames = 0
    private(set) var audioFrames = 0
    /// Set when the stream's video format changed: the recording ends there (said once).
    private(set) var endedAtFormatChange = false

    /// The track formats of the first file, kept for the next segments.
    private var formats: [MediaFormatDescription] = []

    init(pattern: String, segmentDuration: Duration? = nil, log: @escaping (String) -> Void = { _ in }) {
        (self.pattern, self.segmentDuration, self.log) = (pattern, segmentDuration, log)
        path = segmentDuration == nil ? pattern : ""
    }

    /// Records `frame` (none before the first video keyframe; an audio frame before it, or one
    /// whose time does not advance, is dropped).
    ///
    /// - Throws: the MP4 writer's errors; the audio converter's.
    mutating func write(_ frame: CompressedFrame) throws {
        guard !endedAtFormatChange else { return }
        if frame.videoFormat != nil {
            guard gate.admit(frame) else { return }
            if origin == nil { origin = frame.decodeTime }
            // A new segment at the first keyframe past the duration, or at a format change.
            if let segmentDuration, let origin, writer != nil, frame.isKeyframe,
               frame.decodeTime - origin >= segmentDuration || !formats.contains(frame.format) {
                try rotate(at: frame)
            }
        }
        guard let origin, frame.presentationTime >= origin else { return }
        var frames = [shifted(frame, by: origin)]
        if let format = frame.audioFormat, format.codec == .pcmu || format.codec == .pcma {
            if converter?.inputFormat != format { converter = try AudioConverter(from: format) }
            frames = try converter?.convert(frames[0]) ?? []
        }
        for frame in frames {
            if frame.audioFormat != nil {
                // Two audio frames at one time are refused by players: a step back is dropped.
                if let lastAudio, frame.presentationTime <= lastAudio { continue }
                lastAudio = frame.presentationTime
            }
            guard writer != nil else {
                pending.append(frame)
                let video = pending.filter { $0.videoFormat != nil }
                if frame.audioFormat != nil || (video.last?.decodeTime ?? .zero) - (video.first?.decodeTime ?? .zero) >= .seconds(1) {
                    try start()
                }
                continue
            }
            try append(frame)
        }
    }

    /// Ends the recording: the last fragment written, then the file rewritten as a progressive
    /// MP4 (the index at the front). A recording that never started writes no file.
    mutating func finish() throws {
        if writer == nil && !pending.isEmpty { try start() }
        guard let writer else { return }
        try writer.finish()
        self.writer = nil
        try MP4Finalizing.progressive(fromFragmented: path)
    }

    /// Finishes the file being written and begins the next at `keyframe`, with its times from it.
    private mutating func rotate(at keyframe: CompressedFrame) throws {
        if let writer {
            try writer.finish()
            try MP4Finalizing.progressive(fromFragmented: path)
            self.writer = nil
        }
        if let video = keyframe.videoFormat, !formats.contains(keyframe.format) {
            formats = formats.map { $0.video != nil ? .video(video) : $0 }
        }
        // Times count from the new file's first keyframe: the audio's too.
        origin = keyframe.decodeTime
        lastAudio = nil
        try open(formats)
    }

    /// Opens the file with the pending frames' formats (one video, the first audio) and writes them.
    private mutating func start() throws {
        formats = []
        if let video = pending.first(where: { $0.videoFormat != nil })?.format { formats.append(video) }
        if let audio = pending.first(where: { $0.audioFormat != nil })?.format { formats.append(audio) }
        try open(formats)
        let frames = pending
        pending = []
        for frame in frames { try append(frame) }
    }

    /// Begins the next file (the pattern filled in) with `formats`.
    private mutating func open(_ formats: [MediaFormatDescription]) throws {
        if segmentDuration != nil { path = Self.fill(pattern, index: files.count + 1) }
        files.append(path)
        let writer = try FragmentedMP4FileWriter(path: path, formats: formats)
        // Half a second a fragment: a recorder killed mid-GOP loses at most that.
        writer.maximumFragmentDuration = .milliseconds(500)
        self.writer = writer
    }

    /// `pattern` with its `%0Nd` field (`%03d`) as `index` and its strftime fields (`%Y`, `%d` …)
    /// as the local time.
    static func fill(_ pattern: String, index: Int) -> String {
        var text = pattern
        if let field = text.range(of: #"%0[0-9]+d"#, options: .regularExpression) {
            text.replaceSubrange(field, with: String(format: String(text[field]), index))
        }
        guard text.contains("%") else { return text }
        var now = time(nil), local = tm()
        localtime_r(&now, &local)
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = strftime(&buffer, buffer.count, text, &local)
        return count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : text
    }

    private mutating func append(_ frame: CompressedFrame) throws {
        guard let writer else { return }
        // A track the file was not opened with (audio that started late) is left out.
        guard writer.formats.contains(where: { ($0.video != nil) == (frame.format.video != nil) }) else { return }
        do {
            try writer.append(frame)
        } catch {
            // The file's one initialization segment cannot describe the new format.
            guard error.code == .mp4WriterState else { throw error }
            endedAtFormatChange = true
            return
        }
        if frame.videoFormat != nil { videoFrames += 1 } else { audioFrames += 1 }
    }

    /// `frame` with its times counted from `origin`.
    private func shifted(_ frame: CompressedFrame, by origin: Duration) -> CompressedFrame {
        var frame = frame
        frame.presentationTime -= origin
        frame.decodeTime -= origin
        return frame
    }
}
