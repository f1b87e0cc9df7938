#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import MediaCore

/// Writes an HLS stream into a directory, each file as it completes, for any web server (or
/// none: FFmpeg and players read the files) to serve: an ``HLSPackager`` without parts cuts the
/// segments at keyframes, and this writes `init-N.mp4` and `seg-N.m4s` beside the playlist
/// (`index.m3u8` by default), which is rewritten after each segment under a temporary name and
/// renamed over the old one, so a reader never sees half of it.
///
/// - With ``Configuration/windowSegments`` nil (a recording, a conversion) every segment stays:
///   the playlist says `EXT-X-PLAYLIST-TYPE:EVENT` while it grows, `VOD` and `EXT-X-ENDLIST`
///   once ``finish()`` ends it.
/// - With a window the playlist lists the last segments (a live stream); the files of two more
///   stay for players still fetching them, and older ones are deleted.
///
/// ```swift
/// var writer = try HLSDirectoryWriter(.init(directory: "out/hls"))
/// for frame in frames { try writer.append(frame) }
/// try writer.finish()   // out/hls/index.m3u8: a VOD playlist
/// ```
///
/// A segment's bytes are dropped from memory once written. Not thread-safe.
public struct HLSDirectoryWriter {
    /// Where and how a directory writer writes.
    public struct Configuration: Sendable, Hashable {
        /// The directory (created when missing, its parent must exist).
        public var directory: String
        /// The playlist's file name in the directory.
        public var playlistName: String
        /// The target duration of a segment: a segment ends at the first keyframe past it.
        public var segmentDuration: Duration
        /// The segments the playlist lists; nil: every segment (an event, then VOD).
        public var windowSegments: Int?
        /// A jump in the source's times longer than this begins a discontinuity.
        public var maximumGap: Duration

        /// A configuration of its parts.
        ///
        /// - Parameters:
        ///   - directory: where the files go.
        ///   - playlistName: the playlist's file name (`index.m3u8`).
        ///   - segmentDuration: the target duration of a segment (2 s).
        ///   - windowSegments: the segments listed; nil: every one.
        ///   - maximumGap: a jump in time that begins a discontinuity.
        public init(directory: String, playlistName: String = "index.m3u8", segmentDuration: Duration = .seconds(2),
                    windowSegments: Int? = nil, maximumGap: Duration = .seconds(2)) {
            (self.directory, self.playlistName, self.segmentDuration) = (directory, playlistName, segmentDuration)
            (self.windowSegments, self.maximumGap) = (windowSegments, maximumGap)
        }
    }

    /// The configuration.
    public let configuration: Configuration
    /// Segments written so far.
    public private(set) var segmentCount = 0
    /// The audio codec left out (G.711: no HLS player takes it), if one was.
    public var leftOutAudio: AudioCodec? { packager.leftOutAudio }
    /// True once ``finish()`` has ended the playlist.
    public var isFinished: Bool { packager.isFinished }

    private var packager: HLSPackager
    /// The segments and initialization segments on disk, by number.
    private var segmentsOnDisk: [Int] = []
    private var mapsOnDisk: Set<Int> = []
    /// Dates in the playlist: true once a frame came with its wall-clock time.
    private var dates = false

    /// A writer of the directory `configuration.directory`, created if missing.
    ///
    /// - Throws: `mp4FileError` when the directory cannot be made.
    public init(_ configuration: Configuration) throws(MediaError) {
        self.configuration = configuration
        // Every segment: a window the packager never reaches (its count plus two stays an Int).
        packager = HLSPackager(.init(segmentDuration: configuration.segmentDuration, partDuration: nil,
                                     windowSegments: configuration.windowSegments ?? Int.max / 2, maximumGap: configuration.maximumGap))
        if mkdir(configuration.directory, 0o777) != 0 && errno != EEXIST {
            throw MediaError(.mp4FileError, field: configuration.directory, "cannot create \(configuration.directory) (errno \(errno))")
        }
    }

    /// Takes the next frame (as ``HLSPackager/append(_:wallClock:)``); a segment it completes is
    /// written, with its initialization segment the first time, and the playlist rewritten.
    ///
    /// - Parameters:
    ///   - frame: video (4-byte lengths) in decoding order, or AAC or Opus audio.
    ///   - wallClock: when it arrived, since 1970 (`EXT-X-PROGRAM-DATE-TIME`); nil: no dates.
    /// - Throws: the packager's errors; `mp4FileError` for a file that cannot be written.
    public mutating func append(_ frame: CompressedFrame, wallClock: Duration? = nil) throws(MediaError) {
        if wallClock != nil { dates = true }
        if try packager.append(frame, wallClock: wallClock ?? .zero) { try writeCompleted() }
    }

    /// Ends the stream: the last segment written, the playlist rewritten with `EXT-X-ENDLIST`
    /// (`EXT-X-PLAYLIST-TYPE:VOD` when no segment left it). Calling it again does nothing.
    ///
    /// - Throws: the packager's errors; `mp4FileError`.
    public mutating func finish() throws(MediaError) {
        guard !packager.isFinished else { return }
        try packager.finish()
        try writeCompleted()
    }

    /// Writes the segments completed since the last call, deletes those that left the kept
    /// files, and rewrites the playlist.
    private mutating func writeCompleted() throws(MediaError) {
        let last = segmentsOnDisk.last ?? -1
        for index in packager.segments.indices where packager.segments[index].sequence > last {
            let segment = packager.segments[index]
            if !mapsOnDisk.contains(segment.map), let initialization = packager.initializations[segment.map] {
                try Self.write(initialization, to: path("init-\(segment.map).mp4"))
                mapsOnDisk.insert(segment.map)
            }
            try Self.write(segment.bytes, to: path(segment.name))
            packager.segments[index].bytes = []
            segmentsOnDisk.append(segment.sequence)
            segmentCount += 1
        }
        let kept = packager.segments.first?.sequence ?? 0
        while let oldest = segmentsOnDisk.first, oldest < kept {
            unlink(path("seg-\(oldest).m4s"))
            segmentsOnDisk.removeFirst()
        }
        for map in mapsOnDisk where packager.initializations[map] == nil {
            unlink(path("init-\(map).mp4"))
            mapsOnDisk.remove(map)
        }
        let text = packager.render(skip: false, served: false, growsOnly: configuration.windowSegments == nil, dates: dates)
        try Self.replace(path(configuration.playlistName), with: Array(text.utf8))
    }

    /// Writes `bytes` to `.NAME.tmp` beside `path`, then renames it to `path`: a reader sees the
    /// old file or the new one, never half of one.
    static func replace(_ path: String, with bytes: [UInt8]) throws(MediaError) {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let temporary = String(path[..<slash]) + "." + String(path[slash...]) + ".tmp"
        try write(bytes, to: temporary)
        guard rename(temporary, path) == 0 else { throw MediaError(.mp4FileError, field: path, "cannot rename \(temporary) (errno \(errno))") }
    }

    /// The path of the file `name` in the directory.
    private func path(_ name: String) -> String { configuration.directory + "/" + name }

    /// Writes `bytes` to a new file at `path` (replacing one there).
    static func write(_ bytes: [UInt8], to path: String) throws(MediaError) {
        guard let file = fopen(path, "wb") else { throw MediaError(.mp4FileError, field: path, "cannot create \(path) (errno \(errno))") }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        let closed = fclose(file)
        guard written == bytes.count, closed == 0 else { throw MediaError(.mp4FileError, field: path, "cannot write \(path) (errno \(errno))") }
    }
}
