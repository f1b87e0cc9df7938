import H264Decoder
import MediaContainers
import MediaCore

/// What the commands that record MP4 (`receive`, `relay`, `serve`) share: libavcodec's AAC-LC
/// converter for a G.711 track (this executable links libavcodec; MediaContainers and the NIO
/// modules do not) and the lines the recorder's events make.
enum MP4Recording {
    /// H264Decoder's `AudioConverter` for the recorder's G.711 tracks.
    static let audioConverter: @Sendable (AudioFormatDescription) throws -> any AudioFrameConverting = { format in
        try AudioConverter(from: format)
    }

    /// The line an event of the recorder makes; nil for one that is not said (a file begun).
    static func describe(_ event: MP4Recorder.Event) -> String? {
        switch event {
        case .audioConverted(let from, let to): "audio: \(from.rawValue) converted to \(to.rawValue) for MP4 (MP4 players take no G.711)"
        case .audioLeftOut(let codec, let reason): "audio: \(codec.rawValue) left out of the MP4 (\(reason))"
        case .began: nil
        case .finished(let path): "finished \(path)"
        }
    }

    /// The summary line: the frames and the files.
    static func summary(files: [String], videoFrames: Int, audioFrames: Int) -> String {
        "wrote \(videoFrames) video and \(audioFrames) audio frames as MP4 "
            + (files.count == 1 ? "(\(files[0]))" : "in \(files.count) files (\(files.first ?? "") … \(files.last ?? ""))")
    }
}
