import Foundation
import H264
import H264TestSupport
import Testing

#if canImport(Glibc)
import Glibc
import RTP
#endif

/// RTP against real peers, on 127.0.0.1 only: FFmpeg and GStreamer read what `h264 serve --rtp`
/// sends (through its SDP), and `RTPDepacketizer` reads what FFmpeg (`-f rtp`) and GStreamer
/// (`rtph264pay`) send, giving back the sender's NAL units.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct RTPPeerTests {
    /// Depacketizes packets; returns the NAL units of every access unit, in order, and the events
    /// that were not access units (and a line when `RTPZeroCopyDepacketizer` read others).
    static func depacketize(_ packets: [[UInt8]]) -> (nalUnits: [[UInt8]], problems: [String]) {
        var depacketizer = RTPDepacketizer()
        var units: [[UInt8]] = []
        var problems: [String] = []
        func drain() {
            while let event = depacketizer.next() {
                if case .accessUnit(let unit) = event {
                    units += unit.accessUnit.nalUnits.map(Array.init)
                } else {
                    problems.append("\(event)")
                }
            }
        }
        for packet in packets {
            depacketizer.append(packet: packet)
            drain()
        }
        depacketizer.finish()
        drain()
        // The zero-copy twin, fed the same packets all in one buffer, reads the same NAL units.
        let buffer = packets.flatMap { $0 }
        var twin = RTPZeroCopyDepacketizer()
        var twinUnits: [[UInt8]] = []
        var offset = 0
        func drainTwin() {
            while let event = twin.next() {
                if case .accessUnit(let unit) = event { twinUnits += unit.accessUnit.accessUnit.nalUnits.map(Array.init) }
            }
        }
        for packet in packets {
            twin.append(packet: offset..<(offset + packet.count), in: buffer)
            offset += packet.count
            drainTwin()
        }
        twin.finish()
        drainTwin()
        if twinUnits != units { problems.append("RTPZeroCopyDepacketizer read other NAL units than RTPDepacketizer") }
        return (units, problems)
    }

    static let fixture = "conformance/MIDR_MW_D.264"

    /// The fixture's NAL units, by the library's Annex-B scanner.
    static func fixtureNALUnits() throws -> [[UInt8]] {
        let bytes = try TestFixtures.data(fixture)
        return AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
    }

    @Test func readsWhatFFmpegSends() throws {
        let input = try TestFixtures.path(Self.fixture)
        let socket = try LoopbackUDP()
        let (packets, status) = try socket.receive(fromProgram: ["ffmpeg", "-nostdin", "-v", "error", "-f", "h264", "-i", input,
                                                                 "-c", "copy", "-f", "rtp", "rtp://127.0.0.1:\(socket.port)"])
        #expect(status == 0)
        let (units, problems) = Self.depacketize(packets)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(units == (try Self.fixtureNALUnits()))
    }

    @Test(arguments: ["zero-latency", "max-stap", "none"])
    func readsWhatGStreamerSends(aggregateMode: String) throws {
        let input = try TestFixtures.path(Self.fixture)
        let socket = try LoopbackUDP()
        let (packets, status) = try socket.receive(fromProgram: socket.gstreamerSender(file: input, parser: "h264parse", payloader: "rtph264pay",
                                                                                       aggregateMode: aggregateMode))
        #expect(status == 0)
        #expect(packets.allSatisfy { $0.count <= 1200 })
        let (units, problems) = Self.depacketize(packets)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        // config-interval=-1 repeats SPS and PPS before every IDR: the rest is the input, unit for unit.
        let original = try Self.fixtureNALUnits()
        let isParameterSet = { (unit: [UInt8]) in unit[0] & 0x1F == 7 || unit[0] & 0x1F == 8 }
        #expect(units.filter { !isParameterSet($0) } == original.filter { !isParameterSet($0) })
        #expect(Set(units.filter(isParameterSet)) == Set(original.filter(isParameterSet)))
        if aggregateMode != "none" {
            #expect(packets.contains { $0.count > 12 && $0[12] & 0x1F == 24 }, "STAP-A packets from aggregate-mode=\(aggregateMode)")
        }
    }

    static func serveRTP(port: Int, sdp: String) throws -> ServeProcess {
        try ServeTests.server(["--loop", "--max-keyframe-interval", "10", "--quiet",
                               "--rtp", "udp://127.0.0.1:\(port)", "--sdp", sdp])
    }

    /// `h264 serve --rtp` to a receiver that binds the port of the SDP the server writes
    /// (`receiver(sdp)`): a candidate port for both, the receiver waited for by its own socket on
    /// it, another port when it could not bind that one (``PeerPort``).
    static func serveRTP<Receiver>(sdp: String, to receiver: (String) throws -> Receiver,
                                   process: (Receiver) -> Process) throws -> (server: ServeProcess, receiver: Receiver) {
        var servers: [ServeProcess] = []
        let (peer, _) = try PeerPort.start(.udp, { port in
            servers.forEach { $0.kill() } // of an earlier try whose receiver could not bind
            servers.append(try serveRTP(port: port, sdp: sdp))
            return try receiver(sdp)
        }, process: process)
        return (servers.last!, peer)
    }

    @Test func ffmpegDecodesWhatServeSends() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdp = directory.appendingPathComponent("stream.sdp").path
        let framecrc = directory.appendingPathComponent("frames.crc"), log = directory.appendingPathComponent("ffmpeg.log")
        let (server, ffmpeg) = try Self.serveRTP(sdp: sdp, to: { sdp in
            _ = FileManager.default.createFile(atPath: framecrc.path, contents: nil)
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            return try Subprocess.launch("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-protocol_whitelist", "file,udp,rtp",
                                                     "-i", sdp, "-frames:v", "45", "-f", "framecrc", "-"],
                                         standardOutput: try FileHandle(forWritingTo: framecrc), standardError: try FileHandle(forWritingTo: log))
        }, process: { $0 }) // `timeout`: the socket is its child FFmpeg's
        defer { server.kill() }
        let description = try SessionDescription(parsing: String(contentsOfFile: sdp, encoding: .utf8))
        #expect(description.packetizationMode == 1 && description.parameterSets.count == 2)
        ffmpeg.waitUntilExit()
        #expect(ffmpeg.terminationStatus == 0)
        let errors = try String(contentsOf: log, encoding: .utf8)
        #expect(errors.isEmpty, "\(errors)")
        let frames = try String(contentsOf: framecrc, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(frames.count == 45)
        #expect(frames.allSatisfy { $0.contains("115200") }, "320×240 I420 frames")
        #expect(server.stop() == 0)
    }

    @Test func gstreamerDecodesWhatServeSends() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // GStreamer binds a port of its own (`udpsrc port=0`); its socket's port, read from the
        // kernel's tables, is where the server then sends.
        let decoded = directory.appendingPathComponent("decoded.y4m")
        _ = FileManager.default.createFile(atPath: decoded.path, contents: nil)
        let log = directory.appendingPathComponent("gst.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let y4m = try FileHandle(forWritingTo: decoded), errors = try FileHandle(forWritingTo: log)
        let gst = try Subprocess.launch("timeout", ["30", "gst-launch-1.0", "-q", "udpsrc", "port=0", "num-buffers=400",
                                                    "caps=application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96",
                                                    "!", "rtph264depay", "!", "avdec_h264", "!", "y4menc", "!", "fdsink", "fd=1"],
                                        standardOutput: y4m, standardError: errors)
        try y4m.close()
        try errors.close()
        defer { if gst.isRunning { gst.terminate() } }
        // `timeout` starts gst-launch as its child: the socket is the child's.
        var port: Int?
        _ = BoundedPolling.waitFor(seconds: 20) {
            port = PeerPort.ports(of: gst.processIdentifier, .udp).first
            return port != nil || !gst.isRunning
        }
        let bound = try #require(port, "gst-launch-1.0 bound no UDP socket")
        let server = try Self.serveRTP(port: bound, sdp: directory.appendingPathComponent("stream.sdp").path)
        defer { server.kill() }
        gst.waitUntilExit()
        #expect(gst.terminationStatus == 0)
        let stderr = try String(contentsOf: log, encoding: .utf8)
        #expect(!stderr.contains("ERROR") && !stderr.contains("WARNING"), "\(stderr)")
        let output = try [UInt8](Data(contentsOf: decoded))
        let text = String(decoding: output.prefix(100), as: UTF8.self)
        #expect(text.hasPrefix("YUV4MPEG2 C420 W320 H240"))
        let frameCount = (output.count - (output.firstIndex(of: 0x0A) ?? 0) - 1) / (6 + 115_200)
        #expect(frameCount >= 30, "\(frameCount) frames decoded from 400 packets")
        #expect(server.stop() == 0)
    }
}

extension RTPPeerTests {
    /// `h264 receive` of what `h264 serve --rtp` sends: FFmpeg decodes the Annex-B it writes.
    @Test func receiveWritesAnnexBFFmpegDecodes() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdp = directory.appendingPathComponent("stream.sdp").path
        let output = directory.appendingPathComponent("out.h264").path
        let (server, receiver) = try Self.serveRTP(sdp: sdp, to: { sdp in
            try LoggingProcess(executable: CLI.executable, ["receive", sdp, "-o", output, "--frames", "40", "--idle-timeout", "10"],
                               untilListening: "udp")
        }, process: \.process)
        defer { server.kill() }
        let status = receiver.waitForExit(timeout: 60), log = receiver.waitForLogEnd()
        #expect(status == 0, "\(log)")
        #expect(log.contains("wrote 40 access units"), "\(log)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        let types = AnnexB.nalUnits(in: bytes).map { bytes[$0.range.lowerBound] & 0x1F }
        #expect(Array(types.prefix(3)) == [7, 8, 5], "SPS, PPS, IDR first")
        let probe = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-f", "framecrc", "-"])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        let frames = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(frames.count == 40)
        #expect(server.stop() == 0)
    }
}

extension RTPPeerTests {
    /// `h264 receive` of what `ffmpeg -f rtp` sends (the SDP written by the library for the same
    /// port): the Annex-B it writes holds the sender's input NAL units.
    @Test func receiveReadsWhatFFmpegSends() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.h264").path
        let (status, log) = try Self.receiveFromFFmpeg(try TestFixtures.path(Self.fixture), output: output, realTime: false, in: directory)
        #expect(status == 0, "\(log)")
        #expect(log.contains("wrote 100 access units (0 before the first IDR skipped)"), "\(log)")
        try Self.expectFixtureNALUnits(inAnnexB: output)
    }

    /// `h264 receive` of what `ffmpeg -f rtp` sends of an H.265 file (`a=rtpmap:96 H265/90000`,
    /// RFC 7798, the parameter sets in band): the Annex-B it writes holds the sender's NAL units.
    @Test func receiveReadsWhatFFmpegSendsOfH265() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.265").path
        let input = try TestFixtures.path("hevc/main_gop_bframes_cra.265")
        let (status, log) = try Self.receiveFromFFmpeg(input, format: "hevc", output: output, realTime: false, in: directory) { port in
            SessionDescription(hevcParameterSets: [], address: "127.0.0.1", port: port).text
        }
        #expect(status == 0, "\(log)")
        #expect(log.contains("before the first IRAP picture skipped"), "\(log)")
        let type = { (unit: [UInt8]) in (unit[0] >> 1) & 0x3F }
        let isParameterSet = { (unit: [UInt8]) in (32...34).contains(type(unit)) }
        let nalUnits = { (bytes: [UInt8]) in AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) } }
        let units = nalUnits(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output))))
        let original = nalUnits(try TestFixtures.data("hevc/main_gop_bframes_cra.265"))
        #expect(units.filter { !isParameterSet($0) } == original.filter { !isParameterSet($0) })
        #expect(Set(units.filter(isParameterSet)) == Set(original.filter(isParameterSet)))
        #expect(Array(units.prefix(3)).map(type) == [32, 33, 34], "VPS, SPS, PPS first")
    }

    /// `h264 receive SDP -o output` of what `ffmpeg [-re] -c copy -f rtp` sends of `file` (of
    /// FFmpeg's input `format`), the SDP `sdpText(port)`: the receiver's exit status and
    /// standard error.
    static func receiveFromFFmpeg(_ file: String, format: String = "h264", output: String, realTime: Bool, in directory: URL,
                                  sdpText: (Int) -> String = { SessionDescription(address: "127.0.0.1", port: $0).text })
        throws -> (status: Int32, log: String) {
        let sdp = directory.appendingPathComponent("stream.sdp").path
        // The receiver binds the SDP's port (a candidate: another one when it could not bind
        // it) and says when its socket is bound; only then may FFmpeg send.
        let (receiver, port) = try PeerPort.start(.udp, { port in
            try sdpText(port).write(toFile: sdp, atomically: true, encoding: .utf8)
            return try LoggingProcess(executable: CLI.executable, ["receive", sdp, "-o", output, "--idle-timeout", "2"],
                                      untilListening: "udp")
        }, process: \.process)
        defer { receiver.kill() }
        #expect(receiver.listeningPort(scheme: "udp") == port, "\(receiver.events) \(receiver.stderr)")
        let ffmpeg = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error"] + (realTime ? ["-re"] : []) + ["-f", format, "-i", file,
                                                   "-c", "copy", "-f", "rtp", "rtp://127.0.0.1:\(port)"])
        #expect(ffmpeg.status == 0, "\(ffmpeg.stderr)")
        // It ends by itself 2 s after the last packet.
        let status = receiver.waitForExit(timeout: 60)
        return (status, receiver.waitForLogEnd())
    }

    /// The Annex-B file at `path` holds the fixture's NAL units: SPS and PPS go before every IDR
    /// that lacks them (`h264 receive`'s output rule); everything else is the input, unit for unit,
    /// apart from NAL units of the types in `addedBySender` (e.g. access unit delimiters that
    /// GStreamer's h264parse inserts).
    static func expectFixtureNALUnits(inAnnexB path: String, addedBySender: Set<UInt8> = [],
                                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let units = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }.filter { !addedBySender.contains($0[0] & 0x1F) }
        let original = try fixtureNALUnits()
        let isParameterSet = { (unit: [UInt8]) in unit[0] & 0x1F == 7 || unit[0] & 0x1F == 8 }
        #expect(units.filter { !isParameterSet($0) } == original.filter { !isParameterSet($0) }, sourceLocation: sourceLocation)
        #expect(Set(units.filter(isParameterSet)) == Set(original.filter(isParameterSet)), sourceLocation: sourceLocation)
        for index in units.indices where units[index][0] & 0x1F == 5 && (index == 0 || units[index - 1][0] & 0x1F != 5) {
            #expect(index >= 2 && units[index - 2][0] & 0x1F == 7 && units[index - 1][0] & 0x1F == 8, "SPS, PPS before the IDR at \(index)",
                    sourceLocation: sourceLocation)
        }
    }
}
