import Foundation
import MediaContainers
import MediaCore
import RTP

/// `h264 inspect` of a container or a session description: its tracks — the video format of
/// each sequence header (or the SDP's video media) and the audio track (codec, rate, channels,
/// configuration), one line each, or one JSON object.
struct TrackListing: Encodable {
    struct Track: Encodable {
        var type: String
        var codec: String
        var width: Int?
        var height: Int?
        var sampleRate: Int?
        var channels: Int?
        /// The codec configuration in hex (avcC/hvcC, AudioSpecificConfig).
        var config: String
        var frames: Int?
        /// The RTP payload type and encoding name (SDP only).
        var payloadType: Int?
        var encodingName: String?
        /// The sample entry's type (`avc1`, `hvc1`, `mp4a` …) and the track's duration in
        /// seconds (MP4 only).
        var sampleEntry: String?
        var duration: Double?
    }

    var container: String
    var tracks: [Track]

    /// The listing of `bytes` when they are an FLV file or an SDP; nil for anything else.
    ///
    /// - Throws: the FLV reader's or the SDP parser's fatal errors.
    init?(bytes: [UInt8]) throws {
        if bytes.starts(with: [0x46, 0x4C, 0x56]) {
            let contents = try FLVReader.read(bytes)
            container = "flv"
            tracks = contents.formats.map { format in
                let video = contents.frames.filter { $0.format == format }.count
                return Track(type: "video", codec: format.codec.rawValue, width: format.dimensions.width, height: format.dimensions.height,
                             config: Self.hex(format.configurationRecordBytes), frames: video)
            }
            var audio: [AudioFormatDescription] = []
            for frame in contents.frames { if let format = frame.audioFormat, !audio.contains(format) { audio.append(format) } }
            tracks += audio.map { format in
                Track(type: "audio", codec: format.codec.rawValue, sampleRate: format.sampleRate, channels: format.channelCount,
                      config: Self.hex(format.magicCookie), frames: contents.frames.filter { $0.audioFormat == format }.count)
            }
        } else if bytes.starts(with: Array("v=0".utf8)) {
            let text = String(decoding: bytes, as: UTF8.self)
            container = "sdp"
            tracks = []
            if let video = try? SessionDescription(parsing: text, encodingNames: ["H264", "H265"]) {
                tracks.append(Track(type: "video", codec: video.encodingName == "H265" ? "hevc" : "h264",
                                    config: video.parameterSets.map(Self.hex).joined(separator: ","),
                                    payloadType: Int(video.payloadType), encodingName: video.encodingName))
            }
            if let audio = SessionDescription.audioMedia(parsing: text) {
                tracks.append(Track(type: "audio", codec: audio.format.codec.rawValue, sampleRate: audio.format.sampleRate,
                                    channels: audio.format.channelCount, config: Self.hex(audio.format.magicCookie),
                                    payloadType: Int(audio.payloadType), encodingName: audio.encodingName))
            }
        } else if MP4Reader.isMP4(bytes) {
            (container, tracks) = ("mp4", try Self.mp4Tracks(bytes))
        } else {
            return nil
        }
    }

    /// An MP4 file's tracks: one line per sample entry, with the samples that refer to it.
    static func mp4Tracks(_ bytes: [UInt8]) throws -> [Track] {
        var reader = try MP4Reader(bytes)
        var counts: [MediaFormatDescription: Int] = [:]
        while let frame = try reader.next() { counts[frame.frame.format, default: 0] += 1 }
        return reader.tracks.flatMap { track in
            track.sampleEntries.map { entry in
                let seconds = track.timescale > 0 ? Double(track.duration) / Double(track.timescale) : nil
                var line = Track(type: track.handlerType == "vide" ? "video" : track.handlerType == "soun" ? "audio" : track.handlerType.description,
                                 codec: entry.type.description, config: "", sampleEntry: entry.type.description, duration: seconds)
                switch entry.format {
                case .video(let format):
                    line.codec = format.codec.rawValue
                    (line.width, line.height) = format.dimensions
                    line.config = hex(format.configurationRecordBytes)
                case .audio(let format):
                    line.codec = format.codec.rawValue
                    (line.sampleRate, line.channels) = (format.sampleRate, format.channelCount)
                    line.config = hex(format.magicCookie)
                case nil:
                    break
                }
                line.frames = entry.format.map { counts[$0] ?? 0 }
                return line
            }
        }
    }

    /// One line per track.
    func table() -> String {
        tracks.enumerated().map { index, track in
            var line = "track \(index): \(track.type) \(track.codec)"
            if let width = track.width, let height = track.height { line += " \(width)x\(height)" }
            if let rate = track.sampleRate { line += " \(rate) Hz" }
            if let channels = track.channels { line += " \(channels) ch" }
            if let type = track.payloadType, let name = track.encodingName { line += " (RTP \(type) \(name))" }
            if let entry = track.sampleEntry { line += " (\(entry))" }
            if let duration = track.duration { line += String(format: ", %.3f s", duration) }
            if let frames = track.frames { line += ", \(frames) frames" }
            if !track.config.isEmpty { line += ", config \(track.config)" }
            return line
        }.joined(separator: "\n")
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
