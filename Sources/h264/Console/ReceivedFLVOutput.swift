import H264Decoder
import H264Streaming
import MediaContainers
import MediaCore

/// `h264 receive … -o FILE.flv`: the received frames of both tracks as an FLV file, written as
/// they come — from the first video keyframe on, times in milliseconds from it (both tracks on
/// the source's one timeline), `onMetaData` first, each sequence header before the frames of
/// its format. AAC and G.711 go in as they are; Opus, which legacy FLV has no `SoundFormat`
/// for, is converted to AAC-LC (`AudioConverter`).
struct ReceivedFLVOutput {
    private var writer = FLVWriter(header: FLVFileHeader(hasAudio: true, hasVideo: true))
    private var gate = KeyframeGate()
    private var origin: Duration?
    private var videoFormat: VideoFormatDescription?
    private var audioFormat: AudioFormatDescription?
    private var lastAudio: Int64 = -1
    private var converter: AudioConverter?
    private(set) var videoFrames = 0
    private(set) var audioFrames = 0

    /// The FLV bytes of `frame` (none before the first video keyframe, for an audio frame before
    /// it, or one whose time does not advance its track).
    ///
    /// - Throws: the FLV writer's errors (a composition time past 24 bits).
    mutating func bytes(of frame: CompressedFrame) throws -> [UInt8] {
        switch frame.format {
        case .video(let format):
            guard gate.admit(frame) else { return [] }
            let origin = self.origin ?? frame.decodeTime
            self.origin = origin
            if format != videoFormat {
                if videoFormat == nil {
                    let (width, height) = format.dimensions
                    try writer.appendMetadata(FLVMetadata(width: width, height: height, frameRate: format.framesPerSecond, codec: format.codec))
                }
                try writer.appendSequenceHeader(format, timestamp: milliseconds(frame.decodeTime, origin))
                videoFormat = format
            }
            try writer.appendFrame(frame.data, isKeyframe: frame.isKeyframe, decodeTime: milliseconds(frame.decodeTime, origin),
                                   presentationTime: milliseconds(frame.presentationTime, origin), codec: format.codec)
            videoFrames += 1
        case .audio(let format):
            guard let origin, frame.presentationTime >= origin else { return [] }
            var frames = [frame]
            if format.codec == .opus {
                if converter?.inputFormat != format { converter = try AudioConverter(from: format) }
                frames = (try? converter?.convert(frame)) ?? []
            }
            for frame in frames {
                guard let format = frame.audioFormat else { continue }
                let time = milliseconds(frame.presentationTime, origin)
                // Two audio frames at one time are refused by players: a step back is dropped.
                guard time > lastAudio else { continue }
                if format.codec == .aac && format != audioFormat { try writer.appendAudioSequenceHeader(format, timestamp: time) }
                audioFormat = format
                try writer.appendAudioFrame(frame.data, format: format, timestamp: time)
                lastAudio = time
                audioFrames += 1
            }
        }
        return writer.takeBytes()
    }

    private func milliseconds(_ time: Duration, _ origin: Duration) -> Int64 {
        let (seconds, attoseconds) = (time - origin).components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
