import Foundation
import H264
import H264TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `h264 serve --rtsp 127.0.0.1:0` against real players on 127.0.0.1: FFmpeg (`ffprobe`,
/// `ffmpeg -rtsp_transport tcp|udp`) and GStreamer (`rtspsrc protocols=tcp|udp`) decode what it sends;
/// malformed, oversized and unsupported requests get their RFC 2326 status and the server
/// keeps serving; a viewer that stops reading does not hold up the others.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct RTSPPeerTests {
    /// `h264 serve Fixtures/cars_320x240_30f.y4m --port 0 --rtsp 127.0.0.1:0 --loop … --events -`;
    /// the port is read from its `listening` event (`rtsps://` with `--tls-certificate`).
    final class Server {
        let running: LoggingProcess
        var process: Process { running.process }
        let url: String
        let port: Int

        init(_ arguments: [String] = []) throws {
            running = try LoggingProcess(executable: CLI.executable,
                                         ["serve", TestFixtures.url("cars_320x240_30f.y4m").path, "--port", "0",
                                          "--rtsp", "127.0.0.1:0", "--loop", "--preset", "ultrafast", "--threads", "1"] + arguments,
                                         untilListening: Self.scheme(arguments))
            guard let port = running.listeningPort(scheme: Self.scheme(arguments)) else {
                running.kill()
                throw LoopbackError("h264 serve --rtsp did not start: \(running.stderr)")
            }
            self.port = port
            self.url = "\(Self.scheme(arguments))://127.0.0.1:\(port)/live"
        }

        var stderr: String { running.stderr }

        /// `rtsps` when `arguments` have `--tls-certificate`, else `rtsp`.
        static func scheme(_ arguments: [String]) -> String { arguments.contains("--tls-certificate") ? "rtsps" : "rtsp" }

        /// SIGTERM, then the exit status.
        func stop() -> Int32 { running.stop() }

        /// Every event the server wrote, once it has exited (after ``stop()``).
        func waitForEventsEnd() -> [[String: String]] { running.waitForEventsEnd() }

        /// SIGTERM, then the exit status and everything the server wrote on standard error.
        func stopAndReadLog() -> (status: Int32, log: String) {
            let status = stop()
            return (status, running.waitForLogEnd())
        }
    }

    /// A plain TCP connection that speaks RTSP by hand.
    final class Connection {
        let descriptor: Int32
        private var pending: [UInt8] = []

        init(port: Int, receiveBufferSize: Int32? = nil) throws {
            descriptor = try LoopbackTCP.connect(port: port) { descriptor in
                if var size = receiveBufferSize {
                    setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                }
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            }
        }

        deinit { close(descriptor) }

        func send(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// The next response's status line and headers (its body is skipped), or nil at the end
        /// of the connection. Interleaved frames before it are skipped.
        func response() -> (status: Int, headers: [String: String])? {
            while true {
                while pending.first == UInt8(ascii: "$"), pending.count >= 4 {
                    let length = 4 + (Int(pending[2]) << 8 | Int(pending[3]))
                    guard pending.count >= length else { break }
                    pending.removeFirst(length)
                }
                if pending.first != UInt8(ascii: "$"), let end = pending.indices.first(where: {
                    $0 + 3 < pending.count && pending[$0...($0 + 3)].elementsEqual([13, 10, 13, 10])
                }) {
                    let lines = String(decoding: pending[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                    var headers: [String: String] = [:]
                    for line in lines.dropFirst() {
                        guard let colon = line.firstIndex(of: ":") else { continue }
                        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    }
                    let length = Int(headers["content-length"] ?? "0") ?? 0
                    guard pending.count >= end + 4 + length else { if !receive() { return nil }; continue }
                    pending.removeFirst(end + 4 + length)
                    let status = lines[0].split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? -1
                    return (status, headers)
                }
                if !receive() { return nil }
            }
        }

        /// Reads what is there (waits up to 10 s); false at the end of the connection.
        @discardableResult
        func receive() -> Bool {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return false }
            pending += buffer[0..<count]
            return true
        }

        /// The next interleaved frame (channel, data), or nil at the end of the connection.
        func frame() -> (channel: UInt8, data: [UInt8])? {
            while true {
                if pending.count >= 4, pending[0] == UInt8(ascii: "$") {
                    let length = Int(pending[2]) << 8 | Int(pending[3])
                    if pending.count >= 4 + length {
                        defer { pending.removeFirst(4 + length) }
                        return (pending[1], Array(pending[4..<(4 + length)]))
                    }
                } else if !pending.isEmpty, pending[0] != UInt8(ascii: "$") {
                    return nil // not a frame: the tests here expect none
                }
                if !receive() { return nil }
            }
        }

        /// Reads what has arrived without waiting; false at the end of the connection.
        func receiveAvailable() -> Bool {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0 {
                    pending += buffer[0..<count]
                    continue
                }
                return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
            }
        }

        /// The whole interleaved frames that have arrived on `channel`, removed from what was read.
        func takeFrames(channel: UInt8) -> [[UInt8]] {
            var frames: [[UInt8]] = []
            var offset = 0
            while pending.count - offset >= 4, pending[offset] == UInt8(ascii: "$") {
                let length = Int(pending[offset + 2]) << 8 | Int(pending[offset + 3])
                guard pending.count - offset >= 4 + length else { break }
                if pending[offset + 1] == channel { frames.append(Array(pending[(offset + 4)..<(offset + 4 + length)])) }
                offset += 4 + length
            }
            pending.removeFirst(offset)
            return frames
        }

        /// SETUP (TCP, channels 0-1) and PLAY; the session id.
        func play(_ url: String) throws -> String {
            let setup = request("SETUP \(url)/track1 RTSP/1.0\r\nCSeq: 1\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n")
            let session = try #require(setup?.headers["session"]?.split(separator: ";").first.map(String.init))
            guard request("PLAY \(url) RTSP/1.0\r\nCSeq: 2\r\nSession: \(session)\r\n\r\n")?.status == 200 else {
                throw LoopbackError("PLAY failed")
            }
            return session
        }

        /// Sends a request and reads its response.
        func request(_ text: String) -> (status: Int, headers: [String: String])? {
            send(text)
            return response()
        }
    }

    @Test(arguments: ["tcp", "udp"])
    func ffprobeAndFFmpegDecode(transport: String) throws {
        let server = try Server()
        let probe = try Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-rtsp_transport", transport, "-show_streams",
                                                   "-select_streams", "v", server.url])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
        let fields = String(decoding: probe.stdout, as: UTF8.self)
        #expect(fields.contains("codec_name=h264") && fields.contains("width=320") && fields.contains("height=240"), "\(fields)")
        let decoded = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", transport, "-i", server.url,
                                                     "-frames:v", "60", "-f", "framecrc", "-"])
        #expect(decoded.status == 0)
        #expect(decoded.stderr.isEmpty, "\(decoded.stderr)")
        let frames = String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(frames.count == 60)
        #expect(frames.allSatisfy { $0.contains("115200") }, "320×240 I420 frames")
        #expect(server.stop() == 0)
        #expect(!server.waitForEventsEnd().filter { $0["event"] == "session-playing" }.isEmpty, "a session played")
    }

    @Test(arguments: ["tcp", "udp"])
    func gstreamerDecodes(protocols: String) throws {
        let server = try Server()
        let gst = try Subprocess.run("timeout", GStreamerShutdownRace.decodingPipeline(server.url, ["protocols=\(protocols)"], frames: 60))
        let status = server.stop()
        let serverEvents = server.waitForEventsEnd()
        #expect(status == 0)
        GStreamerShutdownRace.expectPlayed(gst, frames: 60, serverEvents: serverEvents)
        #expect(String(decoding: gst.stdout.prefix(100), as: UTF8.self).hasPrefix("YUV4MPEG2 C420 W320 H240"))
    }

    /// Each bad or unsupported request gets its status (RFC 2326 clause 7.1.1) on a connection
    /// that stays usable; oversized ones get theirs and the connection closes; FFmpeg still
    /// decodes afterwards.
    @Test func badRequestsGetTheirStatusAndTheServerSurvives() throws {
        let server = try Server()
        let url = server.url
        let connection = try Connection(port: server.port)
        let cases: [(request: String, status: Int)] = [
            ("garbage\r\n\r\n", 400),
            ("OPTIONS \(url) RTSP/1.0\r\n\r\n", 400), // no CSeq
            ("OPTIONS \(url) RTSP/1.0\r\nCSeq: 1\r\nno colon\r\n\r\n", 400),
            ("OPTIONS \(url) RTSP/2.0\r\nCSeq: 2\r\n\r\n", 505),
            ("FROBNICATE \(url) RTSP/1.0\r\nCSeq: 3\r\n\r\n", 501),
            ("RECORD \(url) RTSP/1.0\r\nCSeq: 4\r\n\r\n", 405),
            ("DESCRIBE rtsp://127.0.0.1:\(server.port)/other RTSP/1.0\r\nCSeq: 5\r\n\r\n", 404),
            ("PLAY \(url) RTSP/1.0\r\nCSeq: 6\r\n\r\n", 455),
            ("PLAY \(url) RTSP/1.0\r\nCSeq: 7\r\nSession: 1234\r\n\r\n", 454),
            ("SETUP \(url)/track1 RTSP/1.0\r\nCSeq: 8\r\nTransport: RTP/AVP;multicast\r\n\r\n", 461),
            ("SETUP \(url)/track1 RTSP/1.0\r\nCSeq: 9\r\nTransport: RTP/AVP/SCTP\r\n\r\n", 461),
            ("SETUP \(url)/track1 RTSP/1.0\r\nCSeq: 9\r\nTransport: RTP/AVP;unicast\r\n\r\n", 461), // no client_port
            ("OPTIONS \(url) RTSP/1.0\r\nCSeq: 10\r\n\r\n", 200),
        ]
        for (request, status) in cases {
            let response = connection.request(request)
            #expect(response?.status == status, "\(request.debugDescription)")
        }
        #expect(connection.request("OPTIONS * RTSP/1.0\r\nCSeq: 11\r\n\r\n")?.headers["public"]?.contains("DESCRIBE") == true)
        #expect(connection.request("RECORD \(url) RTSP/1.0\r\nCSeq: 12\r\n\r\n")?.headers["allow"]?.contains("PLAY") == true)

        for (request, status) in [
            ("DESCRIBE \(url)/" + String(repeating: "a", count: 5000) + " RTSP/1.0\r\nCSeq: 1\r\n\r\n", 414),
            ("OPTIONS \(url) RTSP/1.0\r\n" + String(repeating: "X-Padding: 0123456789\r\n", count: 500), 400),
            ("SET_PARAMETER \(url) RTSP/1.0\r\nCSeq: 1\r\nContent-Length: 100000000\r\n\r\n", 413),
        ] {
            let oversized = try Connection(port: server.port)
            #expect(oversized.request(request)?.status == status)
            #expect(oversized.response() == nil, "the connection closes after \(status)")
        }

        let decoded = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", server.url,
                                                     "-frames:v", "30", "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(server.stop() == 0)
    }

    /// A hand-made TCP viewer: its first RTP packets carry SPS and PPS (one STAP-A) and then an
    /// IDR; an RTCP sender report with the session's SSRC follows on channel 1 within seconds.
    @Test func interleavedStreamStartsWithParameterSetsAndCarriesSenderReports() throws {
        let server = try Server()
        let viewer = try Connection(port: server.port)
        let setup = viewer.request("SETUP \(server.url)/track1 RTSP/1.0\r\nCSeq: 1\r\nTransport: RTP/AVP/TCP;unicast;interleaved=2-3\r\n\r\n")
        let transport = try #require(setup?.headers["transport"])
        #expect(transport.contains("interleaved=2-3"))
        let ssrcText = try #require(transport.split(separator: ";").first { $0.hasPrefix("ssrc=") }?.dropFirst(5))
        let ssrc = try #require(UInt32(ssrcText, radix: 16))
        let session = try #require(setup?.headers["session"]?.split(separator: ";").first.map(String.init))
        #expect(viewer.request("PLAY \(server.url)/ RTSP/1.0\r\nCSeq: 2\r\nSession: \(session)\r\n\r\n")?.status == 200)
        var rtp: [[UInt8]] = []
        var report: [UInt8]?
        let deadline = ContinuousClock.now + .seconds(15)
        while report == nil, ContinuousClock.now < deadline, let frame = viewer.frame() {
            #expect(frame.channel == 2 || frame.channel == 3)
            if frame.channel == 2 { rtp.append(frame.data) } else if frame.data.count >= 8, frame.data[1] == 200 { report = frame.data }
        }
        let (units, problems) = RTPPeerTests.depacketize(rtp)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        #expect(units.prefix(3).map { $0[0] & 0x1F } == [7, 8, 5])
        #expect(rtp.allSatisfy { $0.count >= 12 && $0[0] >> 6 == 2 && Array($0[8..<12]) == withUnsafeBytes(of: ssrc.bigEndian, Array.init) })
        let sr = try #require(report, "an RTCP sender report within 15 s")
        #expect(Array(sr[4..<8]) == withUnsafeBytes(of: ssrc.bigEndian, Array.init))
        #expect(server.stop() == 0)
    }

    /// 50 hand-made TCP viewers play at once while 10 more join and leave at once; then half
    /// tear down and half drop their connections. Every viewer's capture depacketizes cleanly,
    /// starts with SPS, PPS and IDR and decodes in FFmpeg without an error, and the server
    /// still serves a new viewer afterwards.
    @Test func fiftyViewersJoiningAndLeaving() throws {
        let server = try Server()
        var viewers: [Connection] = []
        var sessions: [String] = []
        var captures: [[[UInt8]]] = []
        for index in 0..<50 {
            let viewer = try Connection(port: server.port)
            sessions.append(try viewer.play(server.url))
            viewers.append(viewer)
            captures.append([])
            if index % 5 == 0 {
                let passing = try Connection(port: server.port)
                _ = try passing.play(server.url) // and gone at once
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        func pictures(_ packets: [[UInt8]]) -> Int { packets.filter { $0.count > 1 && $0[1] & 0x80 != 0 }.count }
        while captures.contains(where: { pictures($0) < 45 }) {
            guard ContinuousClock.now < deadline else { throw LoopbackError("timed out: \(captures.map(pictures))") }
            var descriptors = viewers.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            _ = poll(&descriptors, nfds_t(descriptors.count), 100)
            for (index, viewer) in viewers.enumerated() {
                #expect(viewer.receiveAvailable(), "viewer \(index) lost its connection")
                captures[index] += viewer.takeFrames(channel: 0)
            }
        }
        for (index, viewer) in viewers.enumerated() where index % 2 == 0 {
            // Frames may come before the answer: `response()` skips them.
            #expect(viewer.request("TEARDOWN \(server.url) RTSP/1.0\r\nCSeq: 9\r\nSession: \(sessions[index])\r\n\r\n")?.status == 200)
        }
        viewers.removeAll() // every connection closes; the odd ones without a TEARDOWN
        for (index, capture) in captures.enumerated() {
            let (units, problems) = RTPPeerTests.depacketize(capture)
            #expect(problems.isEmpty, "viewer \(index): \(problems.prefix(3))")
            #expect(units.prefix(3).map { $0[0] & 0x1F } == [7, 8, 5], "viewer \(index)")
            let annexB = units.flatMap { (unit: [UInt8]) -> [UInt8] in [0, 0, 0, 1] + unit }
            let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", "-", "-f", "null", "-"], stdin: annexB)
            #expect(decoded.status == 0 && decoded.stderr.isEmpty, "viewer \(index): \(decoded.stderr)")
        }
        let after = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", server.url,
                                                   "-frames:v", "30", "-f", "null", "-"])
        #expect(after.status == 0 && after.stderr.isEmpty, "\(after.stderr)")
        #expect(server.stop() == 0)
        let played = server.waitForEventsEnd().filter { $0["event"] == "session-playing" }
        #expect(played.count == 61, "60 viewers and FFmpeg played: \(played.count)")
    }

    /// A request that never ends gets 408 Request Timeout within the 10 s request timeout (and
    /// a second), and its connection closes; a quiet connection without a half-sent request
    /// stays open meanwhile.
    @Test func unfinishedRequestTimesOut() throws {
        let server = try Server()
        let quiet = try Connection(port: server.port)
        let stalled = try Connection(port: server.port)
        let start = ContinuousClock.now
        stalled.send("OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n")
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(stalled.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #expect(stalled.response()?.status == 408)
        #expect(stalled.response() == nil, "closed after 408")
        #expect(ContinuousClock.now - start < .seconds(13))
        #expect(quiet.request("OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n")?.status == 200)
        #expect(server.stop() == 0)
    }

    /// A viewer that plays and then stops reading is skipped to the next IDR; FFmpeg beside it
    /// decodes every frame.
    @Test func viewerThatStopsReadingDoesNotHoldUpOthers() throws {
        let server = try Server(["--client-queue-frames", "4", "--send-buffer-size", "4096", "--bitrate", "4000000"])
        let stalled = try Connection(port: server.port, receiveBufferSize: 4096)
        #expect(stalled.request("DESCRIBE \(server.url) RTSP/1.0\r\nCSeq: 1\r\n\r\n")?.status == 200)
        let setup = stalled.request("SETUP \(server.url)/track1 RTSP/1.0\r\nCSeq: 2\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n")
        #expect(setup?.status == 200)
        #expect(setup?.headers["transport"]?.hasPrefix("RTP/AVP/TCP;unicast;interleaved=0-1;ssrc=") == true)
        let session = try #require(setup?.headers["session"]?.split(separator: ";").first.map(String.init))
        let play = stalled.request("PLAY \(server.url) RTSP/1.0\r\nCSeq: 3\r\nSession: \(session)\r\n\r\n")
        #expect(play?.status == 200)
        #expect(play?.headers["rtp-info"] == "url=\(server.url)/track1", "the track only: the first packet is the stream's")
        // From here on `stalled` reads nothing.
        let decoded = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", server.url,
                                                     "-frames:v", "90", "-f", "framecrc", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 90)
        #expect(server.stop() == 0)
        let skipped = server.waitForEventsEnd().filter { $0["event"] == "viewer-skipped" }
        #expect(!skipped.isEmpty && skipped.allSatisfy { $0["frames"] == "4" }, "the stalled viewer was skipped: \(skipped)")
    }
}
