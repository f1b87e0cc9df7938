import H264
@testable import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing
import RTP
import RTSPMessages

/// What cameras answer an RTSP client that the RFC does not allow, read as FFmpeg, retina and
/// gortsplib read it; each case names its public source.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPClientQuirksTests {
    /// bluenviron/gortsplib#410 (its client accepts an answer without CSeq) and
    /// Parrot-Developers/librtsp#2 (the Anafi drone answered without one): the answer is the one
    /// outstanding request's. With two outstanding, it is nobody's, and the next answers with
    /// CSeq still find their requests.
    @Test func anAnswerWithoutCSeqIsTheOneOutstandingRequests() throws {
        let client = try EmbeddedRTSPClient()
        let options = client.request("OPTIONS", "rtsp://cam/live")
        _ = try client.sent()
        try client.channel.writeInbound(ByteBuffer(string: "RTSP/1.0 200 OK\r\nPublic: OPTIONS, DESCRIBE\r\n\r\n"))
        let answer = try options.wait()
        #expect(answer.status == .ok && answer.header("Public") == "OPTIONS, DESCRIBE")

        let describe = client.request("DESCRIBE", "rtsp://cam/live"), keepAlive = client.request("OPTIONS", "rtsp://cam/live")
        let sent = try client.sent()
        try client.channel.writeInbound(ByteBuffer(string: "RTSP/1.0 200 OK\r\n\r\n"))
        let settled = Locked(false)
        describe.whenComplete { _ in settled.withLock { $0 = true } }
        keepAlive.whenComplete { _ in settled.withLock { $0 = true } }
        #expect(!settled.withLock { $0 }, "an answer without CSeq with two requests outstanding is matched to neither")
        try client.answer(sent[1], .ok)
        try client.answer(sent[0], RTSPStatus(code: 404, reasonPhrase: "Not Found"))
        #expect(try keepAlive.wait().status == .ok && describe.wait().status.code == 404)
    }

    /// A control URL case: the DESCRIBE URL, the headers, the SDP's controls, and where SETUP
    /// and PLAY go.
    struct ControlCase: CustomTestStringConvertible, Sendable {
        var name: String
        var contentBase: String?
        var contentLocation: String?
        var sessionControl: String?
        var mediaControl: String?
        var track: String
        var aggregate: String
        var warned: [String] = []
        var testDescription: String { name }
    }

    static let controlCases = [
        // scottlamb/moonfire-nvr#356 (Anjvision, a LIVE555 server): HOST:PORT/PATH.
        ControlCase(name: "Content-Base without a scheme", contentBase: "192.168.1.10:554/stream0/", mediaControl: "trackID=1",
                    track: "rtsp://192.168.1.10:554/stream0/trackID=1", aggregate: "rtsp://192.168.1.10:554/stream0",
                    warned: ["Content-Base"]),
        // bluenviron/gortsplib#636 (Hanwha XNV-6011): a path without scheme and host.
        ControlCase(name: "Content-Base of a path only", contentBase: "/profile2/media.smp/", mediaControl: "trackID=v",
                    track: "rtsp://192.168.1.10:554/profile2/media.smp/trackID=v", aggregate: "rtsp://192.168.1.10:554/profile2/media.smp",
                    warned: ["Content-Base"]),
        // scottlamb/retina#68: `a=control:*` at session level, a relative media control.
        ControlCase(name: "session-level *, relative media control", contentBase: "rtsp://192.168.1.10:554/stream0/", sessionControl: "*",
                    mediaControl: "track1", track: "rtsp://192.168.1.10:554/stream0/track1", aggregate: "rtsp://192.168.1.10:554/stream0"),
        // retina#33 (GeoVision): an absolute media control; an absolute session control is the aggregate.
        ControlCase(name: "absolute controls", sessionControl: "rtsp://192.168.1.10:554/agg", mediaControl: "rtsp://192.168.1.10:554/media/video1",
                    track: "rtsp://192.168.1.10:554/media/video1", aggregate: "rtsp://192.168.1.10:554/agg"),
        // RFC 2326 appendix C.1.1: media-level `*` is the base itself; no Content-Base: Content-Location.
        ControlCase(name: "media-level * against Content-Location", contentLocation: "rtsp://192.168.1.10:554/loc/", mediaControl: "*",
                    track: "rtsp://192.168.1.10:554/loc", aggregate: "rtsp://192.168.1.10:554/loc"),
        ControlCase(name: "no header, no control", track: "rtsp://192.168.1.10:554/stream0", aggregate: "rtsp://192.168.1.10:554/stream0"),
    ]

    @Test(arguments: controlCases) func controlURLs(_ test: ControlCase) throws {
        var sdp = "v=0\r\n" + (test.sessionControl.map { "a=control:\($0)\r\n" } ?? "") + "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"
        if let control = test.mediaControl { sdp += "a=control:\(control)\r\n" }
        let urls = RTSPControlURLs(requestURL: "rtsp://192.168.1.10:554/stream0", contentBase: test.contentBase,
                                   contentLocation: test.contentLocation, description: try SessionDescription(parsing: sdp))
        #expect(urls.track == test.track)
        #expect(urls.aggregate == test.aggregate)
        #expect(urls.warnings.map { $0.field ?? "" } == test.warned)
        #expect(urls.warnings.allSatisfy { $0.code == .invalidRTSPHeader })
    }

    /// The UDP fallback's wait on the handler's loop clock: false when nothing came within the
    /// delay, true as soon as a packet (RTCP here) comes, and true once the handler ended.
    @Test func theFirstPacketIsAwaitedOnTheLoopsClock() throws {
        let silent = try EmbeddedRTSPClient()
        let timedOut = silent.handler.awaitFirstPacket(within: .seconds(3))
        let result = Locked<Bool?>(nil)
        timedOut.whenSuccess { value in result.withLock { $0 = value } }
        silent.loop.advanceTime(by: .milliseconds(2_999))
        #expect(result.withLock { $0 } == nil)
        silent.loop.advanceTime(by: .milliseconds(1))
        #expect(result.withLock { $0 } == false)

        let heard = try EmbeddedRTSPClient()
        let waiting = heard.handler.awaitFirstPacket(within: .seconds(3))
        result.withLock { $0 = nil }
        waiting.whenSuccess { value in result.withLock { $0 = value } }
        let senderReport: [UInt8] = [0x80, 200, 0, 6, 0, 0, 0, 7] + [UInt8](repeating: 0, count: 20)
        senderReport.withUnsafeBytes { heard.handler.receive(rtcp: $0) }
        #expect(result.withLock { $0 } == true)
        #expect(try heard.handler.awaitFirstPacket(within: .seconds(3)).wait(), "a packet came before")

        let ended = try EmbeddedRTSPClient()
        let cut = ended.handler.awaitFirstPacket(within: .seconds(3))
        ended.handler.end(.serverClosed)
        #expect(try cut.wait())
    }

    /// membraneframework/membrane_rtsp#54 (a Reolink camera sends requests of its own) and
    /// FFmpeg's rtsp.c (`rtsp_send_reply`): the server's OPTIONS is answered 200, another method
    /// 501, with its CSeq; the client's own request still gets its answer.
    @Test func theServersRequestsAreAnswered() throws {
        let client = try EmbeddedRTSPClient()
        let describe = client.request("DESCRIBE", "rtsp://cam/live")
        let sent = try client.sent()
        try client.channel.writeInbound(ByteBuffer(string: "OPTIONS * RTSP/1.0\r\nCSeq: 7\r\n\r\n"
            + "ANNOUNCE rtsp://cam/live RTSP/1.0\r\nCSeq: 8\r\nContent-Length: 0\r\n\r\n"))
        var reader = RTSPMessageReader()
        while let buffer = try client.channel.readOutbound(as: ByteBuffer.self) { reader.append(buffer.readableBytesView) }
        var answers: [RTSPResponse] = []
        while let message = try reader.next() { if case .response(let response) = message { answers.append(response) } }
        #expect(answers.map(\.status.code) == [200, 501] && answers.map { $0.header("CSeq") } == ["7", "8"])
        try client.answer(sent[0], .ok)
        #expect(try describe.wait().status == .ok)
    }
}
