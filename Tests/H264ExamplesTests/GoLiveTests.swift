import Foundation
import H264
import H264Streaming
import H264TestSupport
import NIOPosix
import Testing
import MediaContainers

/// `RTMPPublisher` (the README's "Go live") against nginx-rtmp on 127.0.0.1 (`record all`),
/// its recording read by ffprobe: a resolution switch mid-stream (a new sequence header, and
/// FFmpeg decodes both sizes) and negative composition times kept. `RTMPIngestServer` taking
/// FFmpeg's (`-c copy -f flv`) and GStreamer's (`flvmux ! rtmp2sink`) publish: the NAL units
/// equal the file's.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct GoLiveTests {
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

    /// The NAL units of frames (4-byte AVCC) and of their formats' parameter sets.
    static func nalUnits(_ events: [FLVReader.Event]) -> (slices: [[UInt8]], parameterSets: Set<[UInt8]>) {
        var slices: [[UInt8]] = [], parameterSets = Set<[UInt8]>()
        for event in events {
            switch event {
            case .formatChanged(let format): parameterSets.formUnion(format.parameterSets)
            case .frame(let frame):
                for range in (try? AVCC.nalUnits(in: frame.data, lengthSize: 4)) ?? [] {
                    let unit = Array(frame.data[range])
                    if unit[0] & 0x1F == 7 || unit[0] & 0x1F == 8 { parameterSets.insert(unit) } else { slices.append(unit) }
                }
            default: break
            }
        }
        return (slices, parameterSets)
    }

    @Test(arguments: ["ffmpeg", "gstreamer"])
    func peerPublishesToTheIngestServer(_ peer: String) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTMPIngestServer.start(host: "127.0.0.1", port: 0, group: group)
        let url = server.url(host: "127.0.0.1", app: "live", streamKey: "key")
        let received = Task { () -> ([FLVReader.Event], RTMPIncomingStream.Ending?) in
            var publishers = server.publishers.makeAsyncIterator()
            guard let publisher = await publishers.next() else { return ([], nil) }
            var events: [FLVReader.Event] = []
            for await event in publisher { events.append(event) }
            return (events, publisher.ending)
        }
        // FFmpeg reads the Matroska copy of the file (a raw stream with B-frames has no timestamps for -c copy).
        let file = TestFixtures.url("flv/x264_bframes_320x192_9f.264").path, mkv = TestFixtures.url("flv/x264_bframes_320x192_9f.mkv").path
        let publish = peer == "ffmpeg"
            ? try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-i", mkv, "-c", "copy", "-f", "flv", url])
            : try Subprocess.run("timeout", ["30", "gst-launch-1.0", "-q", "filesrc", "location=\(file)", "!", "h264parse", "!",
                                              "flvmux", "streamable=true", "!", "rtmp2sink", "location=\(url)"])
        #expect(publish.status == 0, "\(peer): \(publish.stderr)")
        let (events, ending) = await received.value
        #expect(ending == .unpublished || ending == .connectionClosed, "\(String(describing: ending))")
        let expected = ReferenceAnnexB.split(try [UInt8](TestFixtures.data("flv/x264_bframes_320x192_9f.264"))).map(Array.init)
        let isParameterSet = { (unit: [UInt8]) in unit[0] & 0x1F == 7 || unit[0] & 0x1F == 8 }
        let got = Self.nalUnits(events)
        let slices = expected.filter { !isParameterSet($0) }
        #expect(got.slices == slices, "\(peer): the slices and SEI, in order (\(got.slices.count) units, \(slices.count) expected)")
        #expect(got.parameterSets == Set(expected.filter(isParameterSet)), "\(peer): SPS and PPS (\(got.parameterSets.count) units)")
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
