import Foundation
import H264
import H264Streaming
import H264TestSupport
import NIOPosix
import Testing

/// `RTMPPublisher` (the README's "Go live") against nginx-rtmp on 127.0.0.1 (`record all`),
/// its recording read by ffprobe: a resolution switch mid-stream (a new sequence header, and
/// FFmpeg decodes both sizes) and negative composition times kept.
@Suite(.serialized) struct GoLiveTests {
    /// The access units of an Annex-B fixture that hold a picture, with their format.
    static func units(_ fixture: String) throws -> [AccessUnit] {
        AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data(fixture)).filter { $0.hasPicture && $0.formatDescription != nil }
    }

    @Test func resolutionSwitchAndNegativeCompositionTimes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-golive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMPServer(in: directory)
        defer { nginx.kill() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let publisher = try await RTMPPublisher.connect(to: nginx.url(key: "switch"), group: group)
        let first = try Self.units("flv/x264_bframes_320x192_9f.264"), second = try Self.units("conformance/MIDR_MW_D.264").prefix(10)
        var expectedOffsets: [Int] = []
        for (index, unit) in (first + second).enumerated() {
            // Every third picture is stamped 40 ms before its decoding time: a negative composition time.
            let offset = index % 3 == 2 ? -40 : 0
            expectedOffsets.append(offset)
            let decode = Duration.milliseconds(100 + 40 * index)
            let sent = try await publisher.send(avcc: unit.data, format: try #require(unit.formatDescription), isKeyframe: unit.isIDR,
                                                decodeTime: decode, presentationTime: decode + .milliseconds(offset))
            #expect(sent)
        }
        await publisher.finish()
        #expect(publisher.statistics.sequenceHeaders == 2)
        let recording = nginx.recording(key: "switch"), count = first.count + second.count
        let frames = { try? Subprocess.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=width,height",
                                                       "-of", "csv=p=0", recording]) }
        let sizes = Array(repeating: "320,192", count: first.count) + Array(repeating: "176,144", count: second.count)
        let decoded = BoundedPolling.waitFor(seconds: 10) {
            // Lines of `width,height` (the first may carry a side-data field after them).
            frames().map { String(decoding: $0.stdout, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",").prefix(2).joined(separator: ",") } } == sizes
        }
        #expect(decoded, "ffprobe: \(frames().map { String(decoding: $0.stdout, as: UTF8.self) + $0.stderr } ?? "-")")
        let packets = try Subprocess.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,dts",
                                                      "-of", "csv=p=0", recording])
        let offsets = String(decoding: packets.stdout, as: UTF8.self).split(separator: "\n").map { line in
            let times = line.split(separator: ",").compactMap { Int($0) }
            return times.count == 2 ? times[0] - times[1] : Int.min
        }
        #expect(offsets == expectedOffsets, "PTS − DTS per packet, negative ones kept")
        #expect(offsets.count == count)
        try await group.shutdownGracefully()
    }
}
