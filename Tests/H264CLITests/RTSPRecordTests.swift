import Foundation
import H264
import H264TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `h264 receive --listen rtsp://…`: FFmpeg (`-f rtsp`) and GStreamer (`rtspclientsink`)
/// publish a fixture with RTSP ANNOUNCE and RECORD, over TCP interleaved and over UDP, and the
/// output holds the fixture's NAL units; requests that do not fit record mode get their status.
@Suite(.serialized, .ownThread) struct RTSPRecordTests {
    /// `h264 receive --listen rtsp://127.0.0.1:0/live -o OUTPUT … --events -` as a subprocess:
    /// the port is read from its `listening` event.
    final class Listener {
        let running: LoggingProcess
        var process: Process { running.process }
        let port: Int
        /// `rtsps` with `--tls-certificate`, else `rtsp`.
        let scheme: String
        var url: String { "\(scheme)://127.0.0.1:\(port)/live" }

        init(output: String, _ arguments: [String] = []) throws {
            scheme = RTSPPeerTests.Server.scheme(arguments)
            running = try LoggingProcess(executable: CLI.executable,
                                         ["receive", "--listen", "\(scheme)://127.0.0.1:0/live", "-o", output] + arguments,
                                         untilListening: scheme)
            guard let port = running.listeningPort(scheme: scheme) else {
                running.kill()
                throw LoopbackError("h264 receive --listen did not start: \(running.stderr)")
            }
            self.port = port
        }

        /// Waits for the process to end by itself (at most 30 s, then SIGKILL): its exit status
        /// (-1 when killed) and everything it wrote on standard error.
        func finish() -> (status: Int32, log: String) {
            let status = running.waitForExit(timeout: 30)
            if status == -1 { process.waitUntilExit() }
            return (status, running.waitForLogEnd())
        }
    }

    /// How many frames ffprobe decodes from the H.264 file at `path`.
    static func frameCount(_ path: String) throws -> Int? {
        let probe = try Subprocess.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
                                                   "stream=nb_read_frames", "-of", "csv=p=0", path])
        return Int(String(decoding: probe.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The recording of `publisher` (a command line given the URL to publish to) is the fixture:
    /// the publisher and the listener exit 0, the listener's one session ends for one of `endings` (its event's reason), and the output
    /// has the fixture's NAL units and, for ffprobe, its frame count. `hangs(published, log)`
    /// recognises a publisher's known failure to end (then the listener ends at its idle timeout);
    /// `listenerArguments` go to `h264 receive --listen` (`--auth`).
    static func expectRecordsFixture(endings: [String], addedBySender: Set<UInt8> = [], idleTimeout: Int = 20,
                                     listenerArguments: [String] = [],
                                     hangs: (Subprocess.Output, String) -> Bool = { _, _ in false },
                                     failsAfterSending: (Subprocess.Output) -> Bool = { _ in false },
                                     _ publisher: (String) throws -> Subprocess.Output) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.h264").path
        let listener = try Listener(output: output, ["--idle-timeout", String(idleTimeout)] + listenerArguments)
        let published = try publisher(listener.url)
        let (status, log) = listener.finish()
        let events = listener.running.waitForEventsEnd()
        #expect(status == 0, "\(log)")
        #expect(events.filter { $0["event"] == "session-recording" }.count == 1, "\(events)")
        if !hangs(published, log) {
            #expect(published.status == 0 || failsAfterSending(published), "\(published.stderr)")
            let ended = events.filter { $0["event"] == "session-ended" }.compactMap { $0["reason"] }
            #expect(ended.count == 1 && endings.contains(ended[0]), "\(events)")
        }
        #expect(log.contains("announced H.264 (packetization-mode 1, 2 parameter sets in the SDP)"), "\(log)")
        let expected = try #require(try frameCount(TestFixtures.path(RTPPeerTests.fixture)))
        #expect(log.contains("wrote \(expected) access units (0 before the first IDR skipped)"), "\(log)")
        #expect(log.contains(" 0 lost, 0 access units dropped"), "\(log)")
        try RTPPeerTests.expectFixtureNALUnits(inAnnexB: output, addedBySender: addedBySender)
        #expect(try frameCount(output) == expected)
    }

    @Test(arguments: ["tcp", "udp"]) func recordsWhatFFmpegPublishes(transport: String) throws {
        try Self.expectRecordsFixture(endings: ["teardown"]) { url in
            // Over UDP at the input's pace (-re): a burst could overflow a small socket buffer.
            try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error"] + (transport == "udp" ? ["-re"] : [])
                + ["-f", "h264", "-i", TestFixtures.path(RTPPeerTests.fixture), "-c", "copy",
                   "-f", "rtsp", "-rtsp_transport", transport, url])
        }
    }

    /// GStreamer 1.22's rtspclientsink, over UDP and over TCP, sometimes does not end after the
    /// stream's EOS (over TCP: 1 run in 18 with six at once and a 30 s idle timeout, every access
    /// unit recorded; over UDP also in about one run in four when the listener is stopped for 2 s
    /// with SIGSTOP just after RECORD): it has sent every packet and keeps its RTSP connection
    /// open without a request until the listener's idle timeout closes it; then its receive
    /// loop reconnects to the closed port and posts "Could not connect to server" from
    /// gst_rtsp_client_sink_loop_rx, and gst-launch exits 1 (tshark on loopback: no byte from
    /// GStreamer after RECORD's answer, our FIN at the idle timeout, its SYN, our RST).
    static func rtspClientSinkHangs(_ published: Subprocess.Output, _ log: String) -> Bool {
        published.status == 1 && published.stderr.components(separatedBy: "ERROR: ").count == 2
            && published.stderr.contains("gst_rtsp_client_sink_loop_rx") && published.stderr.contains("Could not connect to server")
            && log.contains("no packet for 3.0 s")
    }

    /// rtspclientsink over TCP, once in about seven full runs since one connection handler
    /// serves PLAY and RECORD: after the recording ended (every access unit recorded, the
    /// session ended as `endings` says), its last send finds the connection closed and
    /// gst-launch exits 1 with this one error. Not diagnosed further (see the closing note of
    /// stop 18); the recording is still checked unit for unit.
    static func rtspClientSinkLastSendFails(_ published: Subprocess.Output) -> Bool {
        published.status == 1 && published.stderr.components(separatedBy: "ERROR: ").count == 2
            && published.stderr.contains("gst_rtsp_client_sink_try_send")
            && published.stderr.contains("Could not send message. (Received end-of-file)")
    }

    @Test(arguments: ["tcp", "udp"]) func recordsWhatGStreamerPublishes(protocols: String) throws {
        // rtspclientsink (gstreamer1.0-rtsp) ends with TEARDOWN or by closing the connection
        // (either, from run to run); h264parse puts an access unit delimiter (type 9) before each picture.
        try Self.expectRecordsFixture(endings: ["connection closed", "teardown"], addedBySender: [9],
                                      idleTimeout: 3,
                                      hangs: Self.rtspClientSinkHangs, failsAfterSending: Self.rtspClientSinkLastSendFails) { url in
            try Subprocess.run("timeout", ["60", "gst-launch-1.0", "-q", "filesrc", "location=\(TestFixtures.path(RTPPeerTests.fixture))",
                                           "!", "h264parse", "!", "rtspclientsink", "location=\(url)", "protocols=\(protocols)"])
        }
    }

    /// `-o OUT.y4m` in listen mode decodes what the publisher sends: every frame FFmpeg decodes
    /// from the fixture, in order.
    @Test func decodesWhatFFmpegPublishes() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.y4m").path
        let listener = try Listener(output: output)
        let published = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-f", "h264",
                                                       "-i", TestFixtures.path(RTPPeerTests.fixture), "-c", "copy",
                                                       "-f", "rtsp", "-rtsp_transport", "tcp", listener.url])
        #expect(published.status == 0, "\(published.stderr)")
        let (status, log) = listener.finish()
        #expect(status == 0, "\(log)")
        let expected = try ReceiveDecodeTests.frameMD5s(TestFixtures.path(RTPPeerTests.fixture), format: ["-f", "h264"])
        #expect(!expected.isEmpty)
        #expect(try ReceiveDecodeTests.frameMD5s(output) == expected)
    }

    /// `--frames N` ends the recording after N access units (the publisher's connection closes
    /// then: how FFmpeg takes that is its business).
    @Test func framesEndsTheRecording() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.h264").path
        let listener = try Listener(output: output, ["--frames", "10"])
        _ = try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "quiet", "-re", "-f", "h264", "-i", TestFixtures.path(RTPPeerTests.fixture),
                                           "-c", "copy", "-f", "rtsp", "-rtsp_transport", "tcp", listener.url])
        let (status, log) = listener.finish()
        #expect(status == 0, "\(log)")
        #expect(log.contains("wrote 10 access units"), "\(log)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        let pictures = AnnexB.nalUnits(in: bytes).filter { [1, 5].contains(bytes[$0.range.lowerBound] & 0x1F) }
        #expect(pictures.count == 10)
        #expect(try Self.frameCount(output) == 10)
    }

    /// An SDP of an H.264 stream, as a publisher announces it.
    static let announcedSDP = SessionDescription(address: "127.0.0.1", port: 0).text + "a=control:streamid=0\r\n"

    static func announce(_ url: String, cSeq: Int, body: String = announcedSDP) -> String {
        "ANNOUNCE \(url) RTSP/1.0\r\nCSeq: \(cSeq)\r\nContent-Type: application/sdp\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    /// Requests outside record mode, out of order, for another path or from a second publisher
    /// get their status (RFC 2326 clause 7.1.1); a publisher that leaves before RECORD frees the
    /// slot; a recording without packets ends after --idle-timeout with exit status 0.
    @Test func requestsOutsideRecordModeGetTheirStatus() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.h264").path
        let listener = try Listener(output: output, ["--idle-timeout", "1"])
        let url = listener.url
        let first = try RTSPPeerTests.Connection(port: listener.port)
        let second = try RTSPPeerTests.Connection(port: listener.port)

        let options = first.request("OPTIONS \(url) RTSP/1.0\r\nCSeq: 1\r\n\r\n")
        #expect(options?.status == 200)
        #expect(options?.headers["public"] == "OPTIONS, ANNOUNCE, SETUP, RECORD, TEARDOWN, GET_PARAMETER")
        for method in ["DESCRIBE", "PLAY", "PAUSE"] {
            let answer = first.request("\(method) \(url) RTSP/1.0\r\nCSeq: 2\r\n\r\n")
            #expect(answer?.status == 405, "\(method)")
            #expect(answer?.headers["allow"]?.contains("ANNOUNCE, SETUP, RECORD") == true, "\(method)")
        }
        #expect(first.request("OPTIONS rtsp://127.0.0.1:\(listener.port)/other RTSP/1.0\r\nCSeq: 3\r\n\r\n")?.status == 404)
        #expect(first.request(Self.announce("rtsp://127.0.0.1:\(listener.port)/other", cSeq: 4))?.status == 404)
        #expect(first.request("RECORD \(url) RTSP/1.0\r\nCSeq: 5\r\n\r\n")?.status == 455, "RECORD before SETUP")
        #expect(first.request("SETUP \(url)/streamid=0 RTSP/1.0\r\nCSeq: 6\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1;mode=record\r\n\r\n")?
            .status == 455, "SETUP before ANNOUNCE")
        #expect(first.request(Self.announce(url, cSeq: 7, body: "v=0\r\nm=audio 0 RTP/AVP 0\r\n"))?.status == 400, "no H.264 in the SDP")

        // The first publisher takes the slot; the second is refused until the first leaves.
        #expect(first.request(Self.announce(url, cSeq: 8))?.status == 200)
        #expect(second.request(Self.announce(url, cSeq: 1))?.status == 453)
        #expect(first.request("SETUP \(url)/streamid=1 RTSP/1.0\r\nCSeq: 9\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1;mode=record\r\n\r\n")?
            .status == 404, "not the announced track")
        #expect(first.request("SETUP \(url)/streamid=0 RTSP/1.0\r\nCSeq: 10\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n")?
            .status == 461, "play mode")
        #expect(first.request("TEARDOWN \(url) RTSP/1.0\r\nCSeq: 11\r\n\r\n")?.status == 200)
        #expect(second.request(Self.announce(url, cSeq: 2))?.status == 200)
        #expect(first.request(Self.announce(url, cSeq: 12))?.status == 453)

        let setup = second.request("SETUP \(url)/streamid=0 RTSP/1.0\r\nCSeq: 3\r\nTransport: RTP/AVP/TCP;unicast;interleaved=0-1;mode=record\r\n\r\n")
        #expect(setup?.status == 200)
        #expect(setup?.headers["transport"]?.hasPrefix("RTP/AVP/TCP;unicast;interleaved=0-1") == true)
        let session = try #require(setup?.headers["session"]?.split(separator: ";").first.map(String.init))
        #expect(first.request("RECORD \(url) RTSP/1.0\r\nCSeq: 13\r\n\r\n")?.status == 455, "the other connection has no session")
        #expect(second.request("RECORD \(url) RTSP/1.0\r\nCSeq: 4\r\nSession: wrong\r\n\r\n")?.status == 454)
        #expect(second.request("RECORD \(url) RTSP/1.0\r\nCSeq: 5\r\nSession: \(session)\r\n\r\n")?.status == 200)

        let (status, log) = listener.finish()
        #expect(status == 0, "\(log)")
        #expect(log.contains("ANNOUNCE refused: another publisher holds /live"), "\(log)")
        #expect(log.contains("no packet for 1.0 s"), "\(log)")
        #expect(log.contains("wrote 0 access units"), "\(log)")
    }

    /// A publisher that announces and then never finishes its next request gets 408 within the
    /// 10 s request timeout, its connection closes, and the slot it held is free again.
    @Test func unfinishedRequestTimesOutAndFreesTheSlot() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let listener = try Listener(output: directory.appendingPathComponent("out.h264").path)
        let url = listener.url
        let stalled = try RTSPPeerTests.Connection(port: listener.port)
        let next = try RTSPPeerTests.Connection(port: listener.port)
        #expect(stalled.request(Self.announce(url, cSeq: 1))?.status == 200)
        #expect(next.request(Self.announce(url, cSeq: 1))?.status == 453)
        let start = ContinuousClock.now
        stalled.send("SETUP \(url)/streamid=0 RTSP/1.0\r\nCSeq: 2\r\n")
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(stalled.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #expect(stalled.response()?.status == 408)
        #expect(stalled.response() == nil, "closed after 408")
        #expect(ContinuousClock.now - start < .seconds(13))
        #expect(next.request(Self.announce(url, cSeq: 2))?.status == 200, "the slot is free")
        let (status, log) = (listener.running.stop(), listener.running.waitForLogEnd())
        #expect(status == 0, "\(log)")
        #expect(log.contains("request not finished within 10.0 seconds: closed"), "\(log)")
    }

    @Test func listenWantsAnRTSPURL() throws {
        let result = try CLI.run(["receive", "--listen", "stream.sdp", "-o", "/dev/null"])
        #expect(result.status == 1)
        #expect(result.stderr == "h264 receive: error: --listen: not an rtsp:// or rtsps:// URL to listen on: stream.sdp\n",
                "\(result.stderr)")
        let plain = try CLI.run(["receive", "--listen", "rtsps://127.0.0.1:0/live", "-o", "/dev/null"])
        #expect(plain.status == 1 && plain.stderr == "h264 receive: error: --listen: rtsps:// goes with a TLS certificate and key (rtsp:// without)\n",
                "\(plain.stderr)")
        let half = try CLI.run(["receive", "--listen", "rtsps://127.0.0.1:0/live", "-o", "/dev/null", "--tls-key", "k.pem"])
        #expect(half.status != 0 && half.stderr.contains("--tls-certificate and --tls-key go together"), "\(half.stderr)")
    }
}
