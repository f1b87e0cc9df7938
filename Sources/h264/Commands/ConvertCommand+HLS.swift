import ArgumentParser
import Foundation
import H264
import MediaContainers
import MediaCore
#if canImport(Glibc)
import Glibc
#endif

/// `h264 convert INPUT -o DIR/index.m3u8`: HLS VOD (MediaContainers' `HLSDirectoryWriter`) —
/// fragmented MP4 segments cut at keyframes, `init-N.mp4` and `seg-N.m4s` beside the playlist.
extension ConvertCommand {
    /// Converts the input (FLV read as it comes, MP4 sample by sample, Annex-B H.264 or H.265)
    /// with its audio (AAC, Opus) into the playlist `-o` names and the segments beside it.
    func convertToHLS(name: String) throws {
        if let fps, !(fps.isFinite && fps > 0) { throw CLIError("--fps \(fps) must be a positive number") }
        let playlist = out.output as NSString
        let directory = playlist.deletingLastPathComponent
        var writer = try CLIError.named(out.output) { () throws(MediaError) in
            try HLSDirectoryWriter(.init(directory: directory.isEmpty ? "." : directory, playlistName: playlist.lastPathComponent,
                                         segmentDuration: .seconds(hlsSegmentDuration)))
        }
        let descriptor = input == "-" ? -1 : open(input, O_RDONLY)
        defer { if descriptor >= 0 { close(descriptor) } }
        var head = [UInt8](repeating: 0, count: 8)
        if descriptor >= 0, pread(descriptor, &head, 8, 0) == 8, FLVConversion.isFLV(head) {
            try streamFLV(descriptor, name: name) { frame throws(MediaError) in try writer.append(frame) }
        } else if descriptor >= 0, MP4Reader.isMP4(head) {
            let diagnostics = try CLIError.named(name) { () throws(MediaError) -> [MediaError] in
                var reader = try MP4Reader(source: try MP4FileSource(path: input))
                guard let video = reader.tracks.first(where: { $0.format?.video != nil }) else {
                    return reader.warnings + [MediaError(.missingParameterSet, field: "stsd", "no H.264 or H.265 track in the file")]
                }
                let tracks = [video.trackID] + reader.tracks.filter { $0.format?.audio != nil }.prefix(1).map(\.trackID)
                while let sample = try reader.next() {
                    if tracks.contains(sample.trackID) { try writer.append(sample.frame) }
                }
                return reader.takeWarnings()
            }
            try CLIIO.report(diagnostics, file: name, command: "convert", strict: strict.strict)
        } else {
            let bytes = try CLIIO.read(input)
            let (frames, diagnostics) = try CLIError.named(name) { () throws(MediaError) in
                if FLVConversion.isFLV(bytes) { return try Self.frames(ofFLV: bytes) }
                return (try MP4Conversion.frames(fromAnnexB: bytes, frameRate: fps.map { FrameRate(approximating: $0) }), [])
            }
            try CLIIO.report(diagnostics, file: name, command: "convert", strict: strict.strict)
            guard frames.contains(where: { $0.videoFormat != nil }) else { throw CLIError("\(name): no picture to write") }
            try CLIError.named(out.output) { () throws(MediaError) in
                for frame in frames { try writer.append(frame) }
            }
        }
        try CLIError.named(out.output) { () throws(MediaError) in try writer.finish() }
        if let leftOut = writer.leftOutAudio {
            FileHandle.standardError.write(Data("h264 convert: the \(leftOut.rawValue) audio track is left out: HLS players do not take it\n".utf8))
        }
        guard writer.segmentCount > 0 else { throw CLIError("\(name): no keyframe, no segment written") }
    }
}
