import H264
@testable import H264Streaming
import NIOCore
import NIOEmbedded
import H264TestSupport
import Testing

/// The keepalive on the event loop's clock: a request every interval with the session, its
/// answer awaited; a missing or failed answer ends the client (`keepAliveFailed`) and closes
/// the connection; ending the client stops it.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPKeepAliveTests {
    @Test func keepalivesGoAtTheIntervalAndAMissingAnswerEndsTheClient() throws {
        let client = try EmbeddedRTSPClient()
        client.handler.startKeepAlive(every: .seconds(4), method: "GET_PARAMETER", uri: "rtsp://cam/s", session: "S1",
                                      timeout: .seconds(10))
        client.loop.advanceTime(by: .milliseconds(3999))
        #expect(try client.sent().isEmpty)
        client.loop.advanceTime(by: .milliseconds(1))
        let first = try client.sent()
        #expect(first.map(\.method) == ["GET_PARAMETER"] && first.first?.session == "S1" && first.first?.uri == "rtsp://cam/s")
        try client.answer(first[0], .ok)
        client.loop.advanceTime(by: .seconds(4))
        let second = try client.sent()
        #expect(second.count == 1, "t = 8 s")
        // No answer to the second: at t = 8 + 10 s the request times out (a third went at 12 s, a fourth at 16 s).
        client.loop.advanceTime(by: .milliseconds(9999))
        #expect(try client.sent().count == 2 && client.ending == nil && client.channel.isActive)
        client.loop.advanceTime(by: .milliseconds(1))
        guard case .keepAliveFailed(let error) = client.ending else {
            Issue.record("ending \(String(describing: client.ending))")
            return
        }
        #expect(error.code == .timeout && error.description.hasPrefix("keepalive GET_PARAMETER rtsp://cam/s: no answer"), "\(error)")
        #expect(!client.channel.isActive, "the connection was closed")
        client.loop.advanceTime(by: .seconds(60))
        #expect(try client.sent().isEmpty, "no keepalive after the ending")
    }

    /// An answer other than 2xx (the server forgot the session) ends the client too.
    @Test func anErrorAnswerEndsTheClient() throws {
        let client = try EmbeddedRTSPClient()
        client.handler.startKeepAlive(every: .seconds(30), method: "OPTIONS", uri: "rtsp://cam/s", session: "S1", timeout: .seconds(10))
        client.loop.advanceTime(by: .seconds(30))
        let sent = try client.sent()
        #expect(sent.map(\.method) == ["OPTIONS"] && sent.first?.session == "S1")
        try client.answer(sent[0], .sessionNotFound)
        #expect(client.ending == .keepAliveFailed(RTSPClientError(.status, "keepalive OPTIONS rtsp://cam/s: 454 Session Not Found",
                                                                  status: .sessionNotFound)))
        #expect(!client.channel.isActive)
    }

    @Test func endingTheClientStopsTheKeepalive() throws {
        let client = try EmbeddedRTSPClient()
        client.handler.startKeepAlive(every: .seconds(4), method: "GET_PARAMETER", uri: "rtsp://cam/s", session: "S1", timeout: .seconds(10))
        client.handler.end(.closed)
        client.loop.advanceTime(by: .seconds(60))
        #expect(try client.sent().isEmpty && client.ending == .closed)
    }
}
