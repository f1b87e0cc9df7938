import Foundation
import H264
import H264Decoder
import H264Streaming
import H264TestSupport
import HEVC
import NIOPosix
import Testing

/// `RTSPClient` against an H.265 camera: gst-rtsp-server (Scripts/gst-rtsp-server.py --codec
/// h265: x265enc, h265parse, rtph265pay, RFC 7798) over TCP and UDP. The SDP's `H265` rtpmap
/// chooses the H.265 depacketizer; the access units start at an IRAP picture, decode in our
/// session to 320×240 frames without damage, and FFmpeg decodes them without an error.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct RTSPHEVCCameraTests {
    @Test(arguments: [RTSPClient.Configuration.Transport.tcp, .udp])
    func playsAnH265Camera(transport: RTSPClient.Configuration.Transport) async throws {
        let server = try GStreamerRTSPServer(["--codec", "h265"])
        defer { server.kill() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = RTSPClient.Configuration()
        configuration.transport = transport
        configuration.idleTimeout = .seconds(10)
        let client = try await RTSPClient.open(url: server.url, group: group, configuration: configuration)
        #expect(client.codec == .hevc)
        #expect(client.sessionDescription.encodingName == "H265")
        #expect((client.udpPort != nil) == (transport == .udp))

        var units: [HEVCAccessUnit] = []
        var times: [Duration] = []
        for await event in client {
            if case .frame(let received) = event {
                if received.frame.videoFormat?.codec != .hevc { Issue.record("an H.264 frame from an H.265 stream") }
                units.append(HEVCAccessUnit(received.frame))
                times.append(received.frame.presentationTime)
            }
            if units.count == 60 { break }
        }
        await client.close()
        try await group.shutdownGracefully()
        #expect(units.count == 60)
        #expect(units.first?.isIRAP == true, "the stream starts at an IRAP picture")
        #expect(units.filter(\.isIRAP).count >= 2, "key-int-max=30: an IRAP picture every 30 frames")
        #expect(times == times.sorted() && times.first == .zero)
        for unit in units {
            for nal in unit.nalUnits {
                let header = HEVCNALUnitHeader(nal[nal.startIndex], nal[nal.startIndex + 1])
                #expect(header.forbiddenZeroBit == 0 && header.nuhLayerId == 0 && header.nuhTemporalIdPlus1 > 0)
            }
        }

        // Our decoder, with the SDP's sprop-vps/sps/pps as the hvcC.
        let record = try HEVCDecoderConfigurationRecord(parameterSets: client.sessionDescription.parameterSets)
        let frames = Locked<[(Int, Int)]>([])
        let session = try DecoderSession(hevcFormatDescription: record, configuration: DecoderConfiguration(threads: .count(1))) { frame in
            frames.withLock { $0.append((frame.width, frame.height)) }
        }
        for (unit, time) in zip(units, times) { try session.decode(unit, presentationTimeStamp: time) }
        try session.waitForAsynchronousFrames()
        session.invalidate()
        let decoded = frames.withLock { $0 }
        #expect(decoded.count == units.count)
        #expect(decoded.allSatisfy { $0 == (320, 240) })
        #expect(session.damagedAccessUnitCount == 0)

        // FFmpeg, on the access units written as Annex-B after the SDP's parameter sets.
        var annexB = try AnnexB.fromAVCC(AVCC.data(nalUnits: client.sessionDescription.parameterSets), lengthSize: 4)
        for unit in units { annexB += try AnnexB.fromAVCC(unit.data, lengthSize: 4) }
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("camera.265").path
        try Data(annexB).write(to: URL(fileURLWithPath: path))
        let probe = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "hevc", "-i", path, "-f", "framecrc", "-"])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        #expect(String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == units.count)
    }

    /// `h264 receive rtsp://… -o OUT.265` of the H.265 camera: 60 access units from an IRAP
    /// picture, which FFmpeg decodes without an error; `-o OUT.y4m` decodes the camera's frames.
    @Test func receiveWritesAnH265Recording() throws {
        let server = try GStreamerRTSPServer(["--codec", "h265"])
        defer { server.kill() }
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("camera.265").path
        let received = try CLI.run(["receive", server.url, "-o", output, "--frames", "60", "--idle-timeout", "10"])
        #expect(received.status == 0, "\(received.stderr)")
        #expect(received.stderr.contains("wrote 60 access units"), "\(received.stderr)")
        let probe = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "hevc", "-i", output, "-f", "framecrc", "-"])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        #expect(String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 60)
        let inspected = try CLI.run(["inspect", "--json", output])
        #expect(try ExpectedStream.parse(inspected.stdout).vps.count >= 1, "the SDP's or the stream's VPS comes first")

        let y4mPath = directory.appendingPathComponent("camera.y4m").path
        let y4m = try CLI.run(["receive", server.url, "-o", y4mPath, "--frames", "5", "--idle-timeout", "10"])
        #expect(y4m.status == 0, "\(y4m.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: y4mPath)))
        #expect(String(decoding: bytes.prefix(40), as: UTF8.self).hasPrefix("YUV4MPEG2 W320 H240 "), "the camera's 320×240")
        #expect(bytes.count == (bytes.firstIndex(of: 0x0A) ?? 0) + 1 + 5 * (6 + 115_200), "5 frames of 320×240 4:2:0")
    }
}
