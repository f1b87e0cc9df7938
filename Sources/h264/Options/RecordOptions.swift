import ArgumentParser
import H264Streaming
import MediaContainers

/// `-o FILE.mp4`, `--segment-duration` and `--vod-playlist` of `relay` and `serve`: the stream recorded beside its
/// viewers (H264Streaming's `MP4RecorderSink`, a sink of the broadcaster).
struct RecordOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Also record the stream, both tracks, to this MP4 (playable up to the last half second after a crash; finalised with its index at the front when the stream ends or on a signal).")
    var output: String?
    @Option(help: "With -o PATTERN.mp4: a new file at the first keyframe after this many seconds (and at a format change or a reconnection gap); PATTERN numbers the files (%0Nd: rec-%03d.mp4) or dates them (strftime: rec-%Y%m%d-%H%M%S.mp4), or both.")
    var segmentDuration: Double?
    @Option(help: ArgumentHelp(RecordOptions.vodPlaylistHelp)) var vodPlaylist: String?

    /// `--vod-playlist`'s help (`receive`'s too).
    static let vodPlaylistHelp = "With -o FILE.mp4: also write this HLS playlist (.m3u8) listing every recorded file's fragments by byte range, rewritten as each file ends and a VOD playlist once the stream ends, which a browser plays and scrubs from a web server of the files' directory; the files are then left fragmented (HLS media as they are) and share one timeline."

    func validate() throws {
        if let output, !ConvertCommand.isMP4Name(output) { throw ValidationError("-o records MP4: name a .mp4 (or .m4v, .mov) file") }
        try Self.validate(segmentDuration: segmentDuration, output: output)
        try Self.validate(vodPlaylist: vodPlaylist, output: output)
    }

    /// `--vod-playlist`'s checks (`receive`'s too): an `.m3u8` name, with an MP4 `-o`.
    static func validate(vodPlaylist: String?, output: String?) throws {
        guard let vodPlaylist else { return }
        guard vodPlaylist.lowercased().hasSuffix(".m3u8") else { throw ValidationError("--vod-playlist names an HLS playlist: FILE.m3u8") }
        guard let output, ConvertCommand.isMP4Name(output) else { throw ValidationError("--vod-playlist lists the files of -o FILE.mp4") }
    }

    /// `--segment-duration`'s checks (`receive`'s too): positive, with `-o PATTERN.mp4` holding a
    /// `%` field so that each segment gets a file of its own.
    static func validate(segmentDuration: Double?, output: String?) throws {
        guard let segmentDuration else { return }
        guard segmentDuration.isFinite && segmentDuration > 0 else { throw ValidationError("--segment-duration must be positive") }
        guard let output, ConvertCommand.isMP4Name(output), output.contains("%") else {
            throw ValidationError("--segment-duration needs -o PATTERN.mp4 with a %03d or strftime field, one file a segment")
        }
    }

    /// The recorder of `-o`, its lines written by `log`; nil without `-o`.
    func recorder(log: @escaping @Sendable (String) -> Void) -> MP4RecorderSink? {
        guard let output else { return nil }
        var configuration = MP4Recorder.Configuration(path: output, segmentDuration: segmentDuration.map { .seconds($0) })
        configuration.vodPlaylist = vodPlaylist
        return MP4RecorderSink(configuration, audioConverter: MP4Recording.audioConverter) { event in
            if let line = MP4Recording.describe(event) { log(line) }
        }
    }
}
