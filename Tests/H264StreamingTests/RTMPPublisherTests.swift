import H264
@testable import H264Streaming
import H264TestSupport
import HEVC
import NIOPosix
import Testing
import MediaContainers
import RTMPMessages

/// ``RTMPPublisher`` against ``ScriptedRTMPServer`` on 127.0.0.1: the messages of a whole
/// publish in order (what nginx-rtmp and FFmpeg read), and every bad peer: a close mid-handshake,
/// `_error`, a refused publish, chunk sizes of 0 and 2^31, an AMF0 string longer than its
/// message, a message length beyond the bound, silence; then the drop-to-IDR rule sans I/O.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTMPPublisherTests {
    static let frameInterval = Duration.milliseconds(40)

    /// Collects the server's messages until `deleteStream` (or the connection's end).
    static func messagesUntilDeleteStream(_ server: ScriptedRTMPServer) async -> [RTMPMessage] {
        var messages: [RTMPMessage] = []
        for await message in server.messages {
            messages.append(message)
            if message.type == .commandAMF0, (try? RTMPCommand(parsing: message.payload))?.name == "deleteStream" { break }
        }
        return messages
    }

    @Test func publishSendsTheMessagesInOrder() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedRTMPServer(group: group)
        let publisher = try await RTMPPublisher.connect(to: server.url(), group: group)
        #expect(publisher.messageStreamId == 1)
        let frames = Array(StreamingFixtures.stream.frames.prefix(12))
        let other = try #require(AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("flv/x264_bframes_320x192_9f.264"))
            .first { $0.isIDR }.flatMap { unit in unit.formatDescription.map { (unit, $0) } })
        for (index, frame) in frames.enumerated() {
            // Presentation 80 ms after decoding for the even frames, 40 ms before it for the odd ones (kept negative).
            let decode = Self.frameInterval * index, presentation = decode + (index.isMultiple(of: 2) ? .milliseconds(80) : .milliseconds(-40))
            try await publisher.send(avcc: frame.avcc, format: try #require(frame.formatDescription), isKeyframe: frame.isKeyframe,
                                     decodeTime: decode + .seconds(5), presentationTime: presentation + .seconds(5))
        }
        // A resolution switch: a new sequence header before the next frame.
        try await publisher.send(avcc: other.0.data, format: other.1, isKeyframe: true, decodeTime: .seconds(6), presentationTime: .seconds(6))
        await publisher.finish()
        await publisher.finish() // idempotent
        let messages = await Self.messagesUntilDeleteStream(server)
        let commands = messages.filter { $0.type == .commandAMF0 }.compactMap { try? RTMPCommand(parsing: $0.payload) }
        #expect(commands.map(\.name) == ["connect", "releaseStream", "FCPublish", "createStream", "publish", "FCUnpublish", "deleteStream"])
        #expect(commands[0].commandObject["app"] == .string("live"))
        #expect(commands[0].commandObject["tcUrl"] == .string("rtmp://127.0.0.1:\(server.port)/live"))
        #expect(commands[4].arguments == [.string("key"), .string("live")])
        #expect(messages.first == RTMPControlMessage.setChunkSize(4096).message)
        #expect(messages.contains(RTMPControlMessage.userControl(.pingResponse(timestamp: 77)).message), "the ping is answered")
        let data = try #require(messages.first { $0.type == .dataAMF0 })
        var reader = AMF0Reader(data.payload)
        let values = try reader.readAll()
        #expect(values.prefix(2) == [.string("@setDataFrame"), .string("onMetaData")])
        #expect(values[2]["width"] == .number(176) && values[2]["height"] == .number(144))
        let video = messages.filter { $0.type == .video }
        #expect(video.count == frames.count + 1 + 2 + 1, "sequence header, frames, a second header and its frame, end of sequence")
        #expect(video.allSatisfy { $0.messageStreamId == 1 })
        let tags = try video.map { try FLVVideoTag(parsing: $0.payload) }
        #expect(tags.first?.packet == .sequenceHeader(.h264(StreamingFixtures.format)))
        for index in frames.indices {
            let tag = tags[index + 1], message = video[index + 1]
            #expect(message.timestamp == UInt32(index * 40), "DTS in ms since the first frame")
            #expect(tag.packet == .codedFrames(data: frames[index].avcc, compositionTime: index.isMultiple(of: 2) ? 80 : -40))
            #expect(tag.frameType == (frames[index].isKeyframe ? .keyframe : .interFrame))
        }
        #expect(tags[frames.count + 1].packet == .sequenceHeader(.h264(other.1)))
        #expect(video[frames.count + 2].timestamp == 1000)
        #expect(tags.last?.packet == .endOfSequence)
        #expect(publisher.statistics == RTMPPublisher.Statistics(framesSent: frames.count + 1, framesDropped: 0, skipsToKeyframe: 0, sequenceHeaders: 2))
        await #expect { try await publisher.send(frames[0]) } throws: { ($0 as? RTMPError)?.code == .invalidUse }
        await server.close()
        try await group.shutdownGracefully()
    }

    /// `offer` never waits: frames beyond the few waiting for the event loop are dropped (to the
    /// next IDR) and counted; every frame is either sent or counted as dropped.
    @Test func offerIsBounded() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedRTMPServer(group: group)
        let publisher = try await RTMPPublisher.connect(to: server.url(), group: group)
        let frames = StreamingFixtures.stream.frames
        for index in 0..<200 {
            var frame = frames[index % frames.count]
            frame.presentationTime = Self.frameInterval * index
            publisher.offer(frame)
        }
        await publisher.finish()
        let video = await Self.messagesUntilDeleteStream(server).filter { $0.type == .video }
        let stats = publisher.statistics
        #expect(stats.framesSent + stats.framesDropped == 200)
        #expect(stats.framesSent >= 1)
        #expect(video.count == stats.framesSent + stats.sequenceHeaders + 1)
        #expect(await publisher.failure?.code == .connectionClosed, "closed by finish")
        await server.close()
        try await group.shutdownGracefully()
    }

    static let badPeers = ScriptedRTMPServer.badPeers(refusingTheStream: ("refuses the publish", .rejectPublish, .rejected, nil,
                                                                          "NetStream.Publish.BadName"))

    @Test(arguments: badPeers.indices)
    func badPeerIsAClearError(_ index: Int) async throws {
        try await ScriptedRTMPServer.expectClearError(Self.badPeers[index]) { url, group, timeout in
            var configuration = RTMPPublisher.Configuration()
            configuration.commandTimeout = timeout
            _ = try await RTMPPublisher.connect(to: url, group: group, configuration: configuration)
        }
    }

    /// `rtmps://` with each trust that accepts the test certificate publishes; the system's
    /// roots refuse the self-signed certificate with a TLS error.
    @Test func rtmpsPublishes() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let identity = try RTSPTLSIdentity(certificateChainFile: TestFixtures.path("tls/rtsps-test.pem"),
                                           privateKeyFile: TestFixtures.path("tls/rtsps-test.key"))
        let server = try await ScriptedRTMPServer(group: group, tls: identity)
        for trust in try RTSPSTests.trusts() {
            var configuration = RTMPPublisher.Configuration()
            configuration.tlsTrust = trust
            let publisher = try await RTMPPublisher.connect(to: server.url(), group: group, configuration: configuration)
            #expect(publisher.url.isSecure && publisher.messageStreamId == 1)
            await publisher.finish()
        }
        await #expect { _ = try await RTMPPublisher.connect(to: server.url(), group: group) } throws: { ($0 as? RTMPError)?.code == .tls }
        await server.close()
        try await group.shutdownGracefully()
    }

    @Test(arguments: ["http://host/live/key", "rtmp://host/live", "rtmp://host", "rtmp://host:99999/live/key"])
    func badURL(_ url: String) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        await #expect { _ = try await RTMPPublisher.connect(to: url, group: group) } throws: { ($0 as? RTMPError)?.code == .badURL }
        try await group.shutdownGracefully()
    }

    @Test func urlParts() throws {
        let url = try RTMPURL("rtmp://[::1]/app/stream/key?token=1")
        #expect(url.host == "::1" && url.port == 1935 && url.app == "app" && url.streamKey == "stream/key?token=1")
        #expect(url.tcUrl == "rtmp://[::1]:1935/app")
        #expect(try RTMPURL("rtmps://example.com/live/k").port == 443)
    }

    /// Back-pressure against a server that stops reading once the publish has started (a 64 KiB
    /// receive buffer): 200 frames of 50 kB are sent as fast as the event loop takes them. The
    /// producer never waits for the socket (all 200 calls return while the server reads nothing;
    /// a watchdog opens the server after 60 s and fails the test if the producer was still
    /// waiting), the connection holds at most its write-buffer bound and one frame, frames are
    /// dropped up to the next IDR and counted, and once the server reads again what arrives is
    /// every frame sent, in order, each run after a gap beginning at an IDR.
    @Test func stalledServerDropsToTheNextKeyframe() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let gate = ScriptedRTMPServer.ReadGate()
        let server = try await ScriptedRTMPServer(group: group, behaviour: .stalled(gate))
        var configuration = RTMPPublisher.Configuration()
        configuration.writeBufferLimit = 256 << 10
        let publisher = try await RTMPPublisher.connect(to: server.url(), group: group, configuration: configuration)
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(60))
            guard !Task.isCancelled else { return false }
            gate.open()
            return true
        }
        let frameBytes = 50_000, count = 200, keyframeInterval = 10
        // Each frame: its length, a slice NAL header (IDR or not), its index, zeros.
        func frame(_ index: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            BigEndian.append(frameBytes - 4, count: 4, to: &bytes)
            bytes.append(index % keyframeInterval == 0 ? 0x65 : 0x41)
            BigEndian.append(index, count: 4, to: &bytes)
            return bytes + [UInt8](repeating: 0, count: frameBytes - bytes.count)
        }
        let channel = publisher.state.withLock { $0.link.channel }
        var sent: [Int] = [], maximumBuffered = 0
        for index in 0..<count {
            let time = Duration.milliseconds(40 * index)
            if try await publisher.send(avcc: frame(index), format: StreamingFixtures.format, isKeyframe: index % keyframeInterval == 0,
                                        decodeTime: time, presentationTime: time) {
                sent.append(index)
            }
            maximumBuffered = max(maximumBuffered, try await channel.getOption(.bufferedWritableBytes))
        }
        watchdog.cancel()
        #expect(await watchdog.value == false, "the producer waited for the stalled server until the watchdog opened it")
        gate.open()
        #expect(maximumBuffered <= configuration.writeBufferLimit + frameBytes + 64, "\(maximumBuffered) bytes buffered")
        let stats = publisher.statistics
        #expect(stats.skipsToKeyframe >= 1 && stats.framesSent == sent.count && stats.framesSent + stats.framesDropped == count, "\(stats)")
        await publisher.finish()
        let received = await Self.messagesUntilDeleteStream(server).filter { $0.type == .video }.compactMap { message -> Int? in
            guard case .codedFrames(let data, _)? = try? FLVVideoTag(parsing: message.payload).packet else { return nil }
            return Int(BigEndian.read(data, at: 5, count: 4))
        }
        #expect(received == sent)
        for (before, after) in zip(received, received.dropFirst()) where after != before + 1 {
            #expect(after % keyframeInterval == 0, "frame \(after) follows \(before): not an IDR")
        }
        await server.close()
        try await group.shutdownGracefully()
    }

    /// Back-pressure sans I/O: frames before the first IDR are dropped; when the connection is
    /// not writable everything up to the next IDR is, counted once as a skip.
    @Test func dropsToTheNextKeyframe() throws {
        var timeline = RTMPVideoTimeline(messageStreamId: 1, syntax: .legacy)
        let format = VideoFormatDescription.h264(StreamingFixtures.format)
        func send(_ keyframe: Bool, writable: Bool = true, at index: Int) throws -> Int {
            try timeline.messages(avcc: [0, 0, 0, 1, 0x41], format: format, isKeyframe: keyframe, decodeTime: .milliseconds(40 * index),
                                  presentationTime: .milliseconds(40 * index), writable: writable).count
        }
        #expect(try send(false, at: 0) == 0, "no IDR yet")
        #expect(try send(true, at: 1) == 2, "sequence header and the IDR")
        #expect(try send(false, at: 2) == 1)
        #expect(try send(false, writable: false, at: 3) == 0)
        #expect(try send(false, at: 4) == 0, "writable again, but waiting for an IDR")
        #expect(try send(true, writable: false, at: 5) == 0)
        #expect(try send(true, at: 6) == 1)
        #expect(timeline.statistics == RTMPPublisher.Statistics(framesSent: 3, framesDropped: 4, skipsToKeyframe: 1, sequenceHeaders: 1))
        #expect(timeline.lastTimestamp == 200, "timestamps since the first frame sent")
        #expect { try timeline.messages(avcc: [], format: format, isKeyframe: true, decodeTime: .zero, presentationTime: .seconds(10_000), writable: true) }
            throws: { ($0 as? MediaError)?.code == .valueOutOfRange }
        let huge = [UInt8](repeating: 0, count: RTMPVideoTimeline.maximumFrameBytes + 1)
        #expect { try timeline.messages(avcc: huge, format: format, isKeyframe: true, decodeTime: .zero, presentationTime: .zero, writable: true) }
            throws: { ($0 as? MediaError)?.code == .rtmpMessageTooLarge }
    }
}
