import H264
import H264Streaming
import H264TestSupport
import NIOPosix
import Testing
import MediaContainers

/// ``RTMPIngestServer`` taking ``RTMPPublisher``'s publish on 127.0.0.1: the frames come out as
/// they went in (format, AVCC bytes, decoding and composition times), the publish ends as
/// unpublished; a second publisher, another application and another stream key are refused.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTMPIngestServerTests {
    @Test func publisherToIngestServer() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTMPIngestServer.start(host: "127.0.0.1", port: 0, group: group, app: "live", streamKey: "key")
        let url = server.url(host: "127.0.0.1", app: "live", streamKey: "key")
        let received = Task { () -> (events: [FLVReader.Event], ending: RTMPIncomingStream.Ending?, key: String) in
            var publishers = server.publishers.makeAsyncIterator()
            guard let publisher = await publishers.next() else { return ([], nil, "") }
            var events: [FLVReader.Event] = []
            for await event in publisher { events.append(event) }
            return (events, publisher.ending, publisher.streamKey)
        }
        let publisher = try await RTMPPublisher.connect(to: url, group: group)
        // While it publishes, nobody else may, nor to another application or key.
        for other in [url, server.url(host: "127.0.0.1", app: "other", streamKey: "key"), server.url(host: "127.0.0.1", app: "live", streamKey: "nope")] {
            await #expect { _ = try await RTMPPublisher.connect(to: other, group: group) } throws: { ($0 as? RTMPError)?.code == .rejected }
        }
        let frames = Array(StreamingFixtures.stream.frames.prefix(20))
        for (index, frame) in frames.enumerated() {
            try await publisher.send(avcc: frame.avcc, format: try #require(frame.formatDescription), isKeyframe: frame.isKeyframe,
                                     decodeTime: .milliseconds(40 * index), presentationTime: .milliseconds(40 * index + (index % 2) * 80))
        }
        await publisher.finish()
        let (events, ending, key) = await received.value
        #expect(key == "key")
        #expect(ending == .unpublished)
        #expect(events.first == .formatChanged(.h264(StreamingFixtures.format)))
        let got = events.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
        #expect(got.map(\.data) == frames.map(\.avcc))
        #expect(got.map(\.decodeTime) == frames.indices.map { Int64(40 * $0) })
        #expect(got.map(\.compositionTime) == frames.indices.map { Int32(($0 % 2) * 80) })
        #expect(got.map(\.isKeyframe) == frames.map(\.isKeyframe))
        #expect(events.last == .endOfSequence(timestamp: Int64(40 * (frames.count - 1))))
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
