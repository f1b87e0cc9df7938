import MediaCore

/// The HLS playlist of a recording's fragmented MP4 files as they lie on disk
/// (``MP4Recorder/Configuration/vodPlaylist``): a fragmented MP4 file is HLS media already —
/// its `ftyp` + `moov` the initialization segment (`EXT-X-MAP` with a `BYTERANGE`), its
/// `moof` + `mdat` fragments the media — so the playlist lists byte ranges of the files and
/// nothing is copied.
///
/// A segment is a run of the file's fragments from one that begins with a keyframe, as long as
/// it lasts less than ``segmentTarget`` or the next fragment does not begin with a keyframe
/// (the recorder's 500 ms fragments cut GOPs), so a player that seeks lands on a keyframe and
/// `EXT-X-INDEPENDENT-SEGMENTS` holds. `EXT-X-DISCONTINUITY` comes before a file whose tracks'
/// formats differ from the one before or whose source times jumped.
struct HLSRecordingPlaylist: Sendable {
    /// A segment: a byte range of one file.
    struct Segment: Sendable, Hashable {
        var offset: Int
        var size: Int
        var duration: Duration
        var isIndependent: Bool
    }

    /// A file of the recording, as listed.
    struct File: Sendable, Hashable {
        /// Its URI in the playlist.
        var uri: String
        /// The size of its initialization segment at its start.
        var initializationSize: Int
        var segments: [Segment]
        /// True when a discontinuity comes before it.
        var discontinuity: Bool
    }

    /// The segments a file's fragments are gathered into last at least this long (from a keyframe).
    static let segmentTarget: Duration = .seconds(2)

    /// The playlist's path.
    let path: String
    /// The files listed, in order.
    private(set) var files: [File] = []
    /// The duration of everything listed: where the next file's timeline starts.
    private(set) var duration: Duration = .zero

    /// A playlist to be written at `path`.
    init(path: String) { self.path = path }

    /// Lists the completed file at `filePath`.
    ///
    /// - Parameters:
    ///   - filePath: the file's path (its URI is relative to the playlist's directory when inside it).
    ///   - initializationSize: its `ftyp` + `moov` size.
    ///   - fragments: its fragments as written.
    ///   - discontinuity: true when its formats differ from the file before, or its times jumped.
    mutating func add(_ filePath: String, initializationSize: Int, fragments: [FragmentedMP4FileWriter.Fragment], discontinuity: Bool) {
        var segments: [Segment] = []
        for fragment in fragments {
            if var last = segments.last, !(fragment.startsWithKeyframe && last.duration >= Self.segmentTarget),
               last.offset + last.size == fragment.offset {
                last.size += fragment.size
                last.duration += fragment.duration
                segments[segments.count - 1] = last
            } else {
                segments.append(Segment(offset: fragment.offset, size: fragment.size, duration: fragment.duration,
                                        isIndependent: fragment.startsWithKeyframe))
            }
            duration += fragment.duration
        }
        guard !segments.isEmpty else { return }
        files.append(File(uri: uri(of: filePath), initializationSize: initializationSize, segments: segments,
                          discontinuity: discontinuity && !files.isEmpty))
    }

    /// `filePath` relative to the playlist's directory when it lies inside it, else as it is.
    private func uri(of filePath: String) -> String {
        let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? ""
        return filePath.hasPrefix(directory) ? String(filePath.dropFirst(directory.count)) : filePath
    }

    /// The playlist's text: `EXT-X-PLAYLIST-TYPE:EVENT` while the recording goes on, `VOD` and
    /// `EXT-X-ENDLIST` once it `ended`.
    func render(ended: Bool) -> String {
        let segments = files.flatMap(\.segments)
        let target = segments.map { HLSPackager.seconds(roundingUp: $0.duration) }.max() ?? 1
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(target)",
                     "#EXT-X-PLAYLIST-TYPE:\(ended ? "VOD" : "EVENT")", "#EXT-X-MEDIA-SEQUENCE:0"]
        if !segments.isEmpty, segments.allSatisfy(\.isIndependent) { lines.append("#EXT-X-INDEPENDENT-SEGMENTS") }
        for file in files {
            if file.discontinuity { lines.append("#EXT-X-DISCONTINUITY") }
            lines.append("#EXT-X-MAP:URI=\"\(file.uri)\",BYTERANGE=\"\(file.initializationSize)@0\"")
            for segment in file.segments {
                lines += ["#EXTINF:\(HLSPackager.decimal(segment.duration)),", "#EXT-X-BYTERANGE:\(segment.size)@\(segment.offset)", file.uri]
            }
        }
        if ended { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes the playlist under a temporary name and renames it over the old one.
    ///
    /// - Throws: `mp4FileError`.
    func write(ended: Bool) throws(MediaError) {
        try HLSDirectoryWriter.replace(path, with: Array(render(ended: ended).utf8))
    }
}
