import AudioCodecs
import H264Decoder
import H264Streaming
import MediaCore

/// What an RTMP output of the CLI does with the source's audio (`--no-audio`, `--silent-audio`).
enum RTMPAudioMode: Sendable {
    /// AAC as it comes; G.711 and Opus converted to AAC-LC (``AudioConverter``).
    case carry
    /// No audio track.
    case none
    /// A silent AAC track (``SilentAACTrack``) in place of the source's audio.
    case silent
}

/// An RTMP publisher as a sink of the relay's broadcaster, with its audio made fit for RTMP:
/// AAC passed on, G.711 and Opus converted by libavcodec (this executable links it already; the
/// NIO modules stay without it), or a silent track for a source without audio.
struct RTMPAudioOutput: LiveSink {
    let publisher: RTMPPublisher
    let mode: RTMPAudioMode
    /// The source's audio format when known before its frames (a camera's SDP): its AAC form is
    /// announced before the first video keyframe.
    var sourceAudio: AudioFormatDescription? = nil
    /// Called once with a line to show (the audio conversion in use, or why audio was left out).
    let report: @Sendable (String) -> Void

    func consume(_ frames: LiveFrameStream) async throws {
        var converter: AudioConverter?, silence = mode == .silent ? try SilentAACTrack() : nil
        var reported = false
        // The AAC track announced before the first picture: the silent one, the source's AAC, or
        // what its G.711 or Opus converts to.
        if let silence {
            try await publisher.announceAudio(silence.format)
        } else if mode == .carry, let source = sourceAudio {
            if source.codec == .aac {
                if !source.magicCookie.isEmpty { try await publisher.announceAudio(source) }
            } else if let made = try? AudioConverter(from: source) {
                converter = made
                report("audio: \(source.codec.rawValue) converted to AAC-LC for RTMP")
                reported = true
                try await publisher.announceAudio(made.outputFormat)
            }
        }
        for await frame in frames {
            switch frame.format {
            case .video:
                if var track = silence {
                    for audio in track.frames(upTo: frame.presentationTime) { try await send(audio) }
                    silence = track
                }
                guard let live = LiveFrame(frame) else { continue }
                try await publisher.send(live)
            case .audio(let format):
                guard mode == .carry else { continue }
                if format.codec == .aac {
                    try await send(frame)
                    continue
                }
                if converter?.inputFormat != format {
                    do {
                        converter = try AudioConverter(from: format)
                        if !reported { report("audio: \(format.codec.rawValue) converted to AAC-LC for RTMP"); reported = true }
                    } catch {
                        if !reported { report("audio: \(format.codec.rawValue) left out (\(error))"); reported = true }
                        converter = nil
                        continue
                    }
                }
                guard let converter else { continue }
                // A frame libavcodec cannot decode is skipped; the next converts as before.
                guard let converted = try? converter.convert(frame) else { continue }
                for audio in converted { try await send(audio) }
            }
        }
    }

    private func send(_ frame: CompressedFrame) async throws {
        guard let format = frame.audioFormat else { return }
        try await publisher.send(audio: frame.data, format: format, timestamp: frame.presentationTime)
    }
}
