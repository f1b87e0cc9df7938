import H264
@testable import H264Streaming
import H264TestSupport
import HEVC
import NIOPosix
import Testing
import MediaContainers
import RTMPMessages

/// ``RTMPPlayer`` against ``ScriptedRTMPServer`` on 127.0.0.1: the video messages come out as
/// the FLV events they carry (format, AVCC bytes, decoding and composition times), the play ends
/// at `NetStream.Play.UnpublishNotify`; bad servers — closing mid-handshake, `_error`,
/// `StreamNotFound`, broken chunk streams, silence — are each a clear ``RTMPError``.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTMPPlayerTests {
    /// The video messages a publisher sends for `frames` (decoding time 40 ms apart, PTS − DTS
    /// `compositionTime(index)` ms), and the end of sequence.
    static func videoMessages(_ frames: [LiveFrame], compositionTime: (Int) -> Int) throws -> [RTMPMessage] {
        var timeline = RTMPVideoTimeline(messageStreamId: 1, syntax: .legacy)
        var video: [RTMPMessage] = []
        for (index, frame) in frames.enumerated() {
            video += try timeline.messages(avcc: frame.avcc, format: try #require(frame.format), isKeyframe: frame.isKeyframe,
                                           decodeTime: .milliseconds(40 * index),
                                           presentationTime: .milliseconds(40 * index + compositionTime(index)), writable: true)
        }
        return video + [timeline.endOfSequence()].compactMap { $0 }
    }

    @Test func playsUntilUnpublished() async throws {
        let frames = Array(StreamingFixtures.stream.frames.prefix(12))
        let video = try Self.videoMessages(frames) { ($0 % 2) * 80 }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedRTMPServer(group: group, behaviour: .playing(video))
        let player = try await RTMPPlayer.connect(to: server.url(), group: group)
        #expect(player.messageStreamId == 1)
        var events: [FLVReader.Event] = []
        for await event in player { events.append(event) }
        #expect(player.ending == .unpublished)
        #expect(events.first == .formatChanged(.h264(StreamingFixtures.format)))
        let got = events.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
        #expect(got.map(\.data) == frames.map(\.avcc))
        #expect(got.map(\.decodeTime) == frames.indices.map { Int64(40 * $0) })
        #expect(got.map(\.compositionTime) == frames.indices.map { Int32(($0 % 2) * 80) })
        #expect(events.last == .endOfSequence(timestamp: Int64(40 * (frames.count - 1))))
        // The messages a player sends: connect, createStream, play (of the key, on the stream),
        // Set Buffer Length, and deleteStream once the stream has ended.
        var commands: [String] = [], pingAnswered = false, bufferLength = false
        for await message in server.messages {
            pingAnswered = pingAnswered || (try? RTMPControlMessage(message)) == .userControl(.pingResponse(timestamp: 77))
            if (try? RTMPControlMessage(message)) == .userControl(.setBufferLength(messageStreamId: 1, milliseconds: 3000)) {
                #expect(commands == ["connect", "createStream", "play"], "Set Buffer Length after play")
                bufferLength = true
            }
            guard message.type == .commandAMF0 else { continue }
            let command = try RTMPCommand(parsing: message.payload)
            commands.append(command.name)
            if command.name == "play" { #expect(command.arguments.first?.string == "key" && message.messageStreamId == 1) }
        }
        #expect(commands == ["connect", "createStream", "play", "deleteStream"])
        #expect(bufferLength, "Set Buffer Length (3000 ms on stream 1)")
        #expect(pingAnswered, "the server's ping (timestamp 77) is answered")
        await server.close()
        try await group.shutdownGracefully()
    }

    /// The relay source of an RTMP stream: each frame as a `LiveFrame` with the sequence
    /// header's format, the keyframe flag, and DTS and DTS + composition time as its times.
    @Test func relaySourceOfAPlayer() async throws {
        let frames = Array(StreamingFixtures.stream.frames.prefix(6))
        let video = try Self.videoMessages(frames) { _ in 80 }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedRTMPServer(group: group, behaviour: .playing(video))
        let player = try await RTMPPlayer.connect(to: server.url(), group: group)
        var relayed: [LiveFrame] = []
        for try await frame in RelaySource.rtmp(player) { relayed.append(frame) }
        #expect(relayed.map(\.avcc) == frames.map(\.avcc))
        #expect(relayed.map(\.isKeyframe) == frames.map(\.isKeyframe))
        #expect(relayed.allSatisfy { $0.formatDescription == StreamingFixtures.format })
        #expect(relayed.map(\.decodeTime) == frames.indices.map { .milliseconds(40 * $0) })
        #expect(relayed.map(\.presentationTime) == frames.indices.map { .milliseconds(40 * $0 + 80) })
        await server.close()
        try await group.shutdownGracefully()
    }

    /// With a window of 4,096 bytes, the player acknowledges what it received (RTMP clause
    /// 5.4.3): sequence numbers rising, each at least a window past the one before.
    @Test func acknowledgesTheServersWindow() async throws {
        let frames = Array(StreamingFixtures.stream.frames.prefix(12))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedRTMPServer(group: group, behaviour: .playing(try Self.videoMessages(frames) { _ in 0 }, window: 4096))
        let player = try await RTMPPlayer.connect(to: server.url(), group: group)
        for await _ in player {}
        var acknowledged: [UInt32] = []
        for await message in server.messages {
            if case .acknowledgement(let number)? = try? RTMPControlMessage(message) { acknowledged.append(number) }
        }
        let videoBytes = frames.reduce(0) { $0 + $1.avcc.count }
        #expect(acknowledged.count >= videoBytes / 4096 - 1 && !acknowledged.isEmpty, "\(acknowledged) for \(videoBytes) bytes of video")
        #expect(zip(acknowledged, acknowledged.dropFirst()).allSatisfy { $1 >= $0 + 4096 }, "\(acknowledged)")
        await server.close()
        try await group.shutdownGracefully()
    }

    /// A consumer that does not read: `bufferLimit` events wait, the others are dropped and
    /// counted, and the sequence still ends.
    @Test func bufferIsBounded() async throws {
        let frames = Array(StreamingFixtures.stream.frames.prefix(12))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedRTMPServer(group: group, behaviour: .playing(try Self.videoMessages(frames) { _ in 0 }))
        var configuration = RTMPPlayer.Configuration()
        configuration.bufferLimit = 2
        let player = try await RTMPPlayer.connect(to: server.url(), group: group, configuration: configuration)
        for await _ in server.messages {} // ends once the player has closed the connection, at the end of the stream
        var events: [FLVReader.Event] = []
        for await event in player { events.append(event) }
        #expect(events.count == 2 && events.first == .formatChanged(.h264(StreamingFixtures.format)))
        #expect(player.droppedEvents == frames.count, "of 14 events (sequence header, 12 frames, end of sequence), 2 kept")
        #expect(player.ending == .unpublished)
        await server.close()
        try await group.shutdownGracefully()
    }

    /// The queue: past its limit an event is dropped, then the frames up to the next keyframe,
    /// which is delivered once there is room — the same for frames of either codec.
    @Test(arguments: VideoCodec.allCases)
    func queueSkipsToTheNextKeyframe(codec: VideoCodec) async {
        let format: VideoFormatDescription = codec == .hevc ? .hevc(RTMPHEVCTests.stream.record) : .h264(StreamingFixtures.format)
        let frame = { (keyframe: Bool, time: Int64) in
            FLVReader.Event.frame(FLVFrame(data: [], format: format, decodeTime: time, compositionTime: 0,
                                                frameType: keyframe ? .keyframe : .interFrame, syntax: .legacy))
        }
        let queue = FrameEventQueue<FLVReader.Event, Int>(limit: 2, keyframeFlag: \.keyframeFlag)
        var events = queue.stream.makeAsyncIterator()
        for event in [frame(true, 0), frame(false, 1), frame(false, 2)] { queue.deliver(event) } // the third is dropped
        #expect(await events.next() == frame(true, 0))
        #expect(await events.next() == frame(false, 1))
        for event in [frame(false, 3), frame(true, 4), frame(false, 5)] { queue.deliver(event) } // 3 is skipped
        queue.end(0)
        #expect(queue.dropped == 2)
        var rest: [FLVReader.Event] = []
        while let event = await events.next() { rest.append(event) }
        #expect(rest == [frame(true, 4), frame(false, 5)])
    }

    /// `rtmps://` plays through the publisher's TLS path (each trust that accepts the test
    /// certificate); the system's roots refuse it with a TLS error.
    @Test func rtmpsPlays() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let identity = try RTSPTLSIdentity(certificateChainFile: TestFixtures.path("tls/rtsps-test.pem"),
                                           privateKeyFile: TestFixtures.path("tls/rtsps-test.key"))
        let server = try await ScriptedRTMPServer(group: group, behaviour: .playing([]), tls: identity)
        for trust in try RTSPSTests.trusts() {
            let player = try await RTMPPlayer.connect(to: server.url(), group: group, configuration: RTMPPlayer.Configuration(tlsTrust: trust))
            for await _ in player {}
            #expect(player.url.isSecure && player.ending == .unpublished)
        }
        await #expect { _ = try await RTMPPlayer.connect(to: server.url(), group: group) } throws: { ($0 as? RTMPError)?.code == .tls }
        await server.close()
        try await group.shutdownGracefully()
    }

    static let badPeers = ScriptedRTMPServer.badPeers(refusingTheStream: ("stream not found", .streamNotFound, .rejected, nil,
                                                                          "NetStream.Play.StreamNotFound"))

    @Test(arguments: badPeers.indices)
    func badPeerIsAClearError(_ index: Int) async throws {
        try await ScriptedRTMPServer.expectClearError(Self.badPeers[index]) { url, group, timeout in
            var configuration = RTMPPlayer.Configuration()
            configuration.commandTimeout = timeout
            _ = try await RTMPPlayer.connect(to: url, group: group, configuration: configuration)
        }
    }
}
