import AudioCodecs
import Foundation
import H264
import H264TestSupport
import MediaContainers
import MediaCore
import Testing

/// FLV audio against FFmpeg 5.1, both ways: a file ``FLVWriter`` writes with H.264 and AAC is
/// probed and decoded by FFmpeg; a file FFmpeg's FLV muxer writes is read by ``FLVReader`` with
/// the AAC frames FFmpeg put in it. Every program runs under `timeout`.
@Suite(.ownThread) struct FLVAudioPeerTests {
    /// Runs `program` under `timeout 60`.
    static func run(_ program: String, _ arguments: [String]) throws -> Subprocess.Output {
        try Subprocess.run("timeout", ["60", program] + arguments)
    }

    /// A fresh path in the temporary directory.
    static func temporaryPath(_ suffix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("flv-audio-\(UUID().uuidString)\(suffix)").path
    }

    /// Two seconds of a 440 Hz sine at 44.1 kHz as FFmpeg's `aac` encoder makes it: the raw frames
    /// (ADTS headers removed).
    static func ffmpegAACFrames() throws -> [[UInt8]] {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:r=44100", "-t", "2",
                                        "-c:a", "aac", "-f", "adts", "-"])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return try ADTSFrames.frames(result.stdout)
    }

    /// The `codec_name`s `ffprobe -show_streams` prints for `path`.
    static func probedCodecs(_ path: String) throws -> [String] {
        let result = try run("ffprobe", ["-v", "error", "-show_streams", path])
        try #require(result.status == 0, "ffprobe: \(result.stderr)")
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("codec_name=") }.map { String($0.dropFirst("codec_name=".count)) }
    }

    /// The error lines of `ffmpeg -v error -i path -f null -` (empty when everything decodes).
    static func decodingErrors(_ path: String) throws -> [String] {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        #expect(result.status == 0)
        return result.stderr.split(separator: "\n").map(String.init)
    }

    /// The B-frame fixture's access units with FFmpeg's timestamps, and FFmpeg's AAC frames every
    /// 1024/44100 s, interleaved by time into one file: FFmpeg sees an h264 and an aac stream and
    /// decodes both without an error line.
    @Test func writtenFileHasBothTracksForFFmpeg() throws {
        let (units, video) = try FLVTests.fixtureUnits()
        let times = FLVConversion.timestamps(of: units, frameRate: 25)
        let aac = try Self.ffmpegAACFrames()
        #expect(aac.count >= 86)
        let format = AudioSpecificConfig(samplingFrequency: 44_100, channelConfiguration: 1).formatDescription
        var writer = FLVWriter(header: FLVFileHeader(hasAudio: true))
        // onMetaData as muxers write it: without its frame rate FFmpeg guesses one from 9 frames.
        let size = video.dimensions
        try writer.appendMetadata(FLVMetadata(width: size.width, height: size.height, frameRate: 25))
        try writer.appendSequenceHeader(video)
        try writer.appendAudioSequenceHeader(format)
        var nextVideo = 0, nextAudio = 0
        while nextVideo < units.count || nextAudio < aac.count {
            let audioTime = Int64(nextAudio) * 1024 * 1000 / 44_100
            if nextVideo < units.count && (nextAudio == aac.count || times[nextVideo].decode <= audioTime) {
                try writer.appendFrame(units[nextVideo].data, isKeyframe: units[nextVideo].isIDR,
                                       decodeTime: times[nextVideo].decode, presentationTime: times[nextVideo].presentation)
                nextVideo += 1
            } else {
                try writer.appendAudioFrame(aac[nextAudio], format: format, timestamp: audioTime)
                nextAudio += 1
            }
        }
        let path = Self.temporaryPath(".flv")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))
        #expect(try Self.probedCodecs(path).sorted() == ["aac", "h264"])
        let errors = try Self.decodingErrors(path)
        #expect(errors == [], "\(errors)")
    }

    /// A file FFmpeg's FLV muxer writes (libx264 and aac) is read with exactly the AAC frames
    /// FFmpeg takes out of it again (`-c:a copy -f adts`, headers removed), in the format of its
    /// sequence header; its video frames come through the same case.
    @Test func ffmpegWrittenFileGivesTheSameAACFrames() throws {
        let path = Self.temporaryPath(".flv")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let made = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25",
                                           "-f", "lavfi", "-i", "sine=f=440:r=44100", "-t", "2",
                                           "-c:v", "libx264", "-c:a", "aac", path])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        let copied = try Self.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-c:a", "copy", "-f", "adts", "-"])
        try #require(copied.status == 0, "ffmpeg: \(copied.stderr)")
        let expected = try ADTSFrames.frames(copied.stdout)
        let contents = try FLVReader.read(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let audio = contents.frames.filter { $0.audioFormat != nil }
        let video = contents.frames.filter { $0.format != nil }
        #expect(contents.skippedTags.isEmpty && contents.warnings.isEmpty)
        #expect(expected.count >= 86)
        #expect(audio.map(\.data) == expected)
        #expect(Set(audio.compactMap(\.audioFormat)).map { [$0.codec.rawValue, "\($0.sampleRate)", "\($0.channelCount)"] }
                    == [["aac", "44100", "1"]])
        #expect(video.count == 50)
        #expect(contents.formats.count == 1)
    }
}
