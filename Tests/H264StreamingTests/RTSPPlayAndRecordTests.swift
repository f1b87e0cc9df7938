import H264
import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing
import RTP

/// One `RTSPServer` with a play path and a record path at once, on real loopback sockets: what a
/// publisher records to `/in` the program hands to the broadcaster of `/out`, and a viewer
/// playing `/out` with `RTSPClient` gets the publisher's access units — both kinds of session on
/// the one connection state machine, concurrently, each ending as it should. Every wait ends
/// by the server's doing (the publisher's TEARDOWN, the broadcaster's flushing close), so a slow
/// machine makes the test slower, never stuck.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPPlayAndRecordTests {
    @Test func aPublisherRelayedToAViewerOnTheSameServer() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        let port = try #require(server.localAddress?.port)
        let (format, frames) = StreamingFixtures.stream
        let sent = Array(frames.drop { !$0.isKeyframe }.prefix(12))
        let output = server.mount("/out", format: format)
        let publishers = server.mountRecording("/in")

        // The viewer plays first, so it waits for the publisher's IDR.
        var configuration = RTSPClient.Configuration()
        configuration.transport = .tcp
        let viewer = try await RTSPClient.open(url: server.url(host: "127.0.0.1", path: "/out"), group: group,
                                               configuration: configuration)
        #expect(output.clientCount == 1)

        // The program: every access unit recorded at /in goes out at /out.
        let relaying = Task {
            var iterator = publishers.makeAsyncIterator()
            guard let publisher = await iterator.next() else { return 0 }
            var relayed = 0
            for await event in publisher {
                guard case .frame(let received) = event else { continue }
                output.broadcast(LiveFrame(avcc: received.frame.data, formatDescription: format,
                                           isKeyframe: received.frame.isKeyframe, presentationTime: .milliseconds(40 * relayed)))
                relayed += 1
            }
            return relayed
        }

        let url = server.url(host: "127.0.0.1", path: "/in")
        let connection = try await RTSPTestConnection(port: port, group: group)
        let sdp = SessionDescription(formatDescription: format, address: "127.0.0.1", port: 0).text + "a=control:streamid=0\r\n"
        #expect(try await connection.request("ANNOUNCE", url, headers: [("Content-Type", "application/sdp"),
                                                                         ("Content-Length", String(sdp.utf8.count))],
                                             body: Array(sdp.utf8)).status == .ok)
        let setup = try await connection.request("SETUP", url + "/streamid=0",
                                                 headers: [("Transport", "RTP/AVP/TCP;unicast;interleaved=0-1;mode=record")])
        #expect(setup.status == .ok)
        let session = String(setup.header("Session")?.split(separator: ";").first ?? "")
        #expect(try await connection.request("RECORD", url, headers: [("Session", session)]).status == .ok)
        try await connection.record(sent, format: format)

        #expect(try await connection.request("TEARDOWN", url, headers: [("Session", session)]).status == .ok)
        #expect(await relaying.value == sent.count, "the recording ended at the publisher's TEARDOWN")
        // Every frame relayed is written to the viewer before its connection closes.
        await output.closeAll(flushing: true)

        // The viewer got every frame (the last complete at its marker bit), then the end.
        var received: [CompressedFrame] = []
        for try await event in viewer {
            if case .frame(let unit) = event { received.append(unit.frame) }
        }
        #expect(received.map(\.isKeyframe) == sent.map(\.isKeyframe))
        for (unit, frame) in zip(received, sent) where !frame.isKeyframe { #expect(unit.data == frame.avcc) }
        await viewer.close()
        await connection.close()
        await server.shutdown()

        var ended: [String: String] = [:]
        for await event in server.events {
            if case .sessionEnded(let id, let reason) = event { ended[id] = reason }
        }
        #expect(ended[session] == "teardown")
        #expect(ended.count == 2 && ended.values.filter { $0 == "connection closed" }.count == 1,
                "the viewer's session ended with its connection: \(ended)")
        try await group.shutdownGracefully()
    }
}
