import H264
@testable import H264Streaming
import H264TestSupport
import HEVC
import NIOPosix
import Testing
import MediaContainers
import RTMPMessages

/// H.265 over Enhanced RTMP (`hvc1`), our publisher against our ingest server, player and a
/// scripted server: `connect` lists the FourCCs, `onMetaData` names `hvc1`, the hvcC goes as the
/// sequence header and every sample comes out as it went in, with its times. No peer here takes
/// Enhanced RTMP: Debian's nginx-rtmp (1.2.2) records and relays none of its video tags (its
/// record and live modules read the legacy FrameType/CodecID byte: 13-byte recordings, players
/// get nothing; the same for `avc1`), FFmpeg 5.1 and GStreamer 1.22 predate it.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTMPHEVCTests {
    /// The first 20 access units of the B-frame stream as hvc1 samples, with their hvcC.
    static let stream: (record: HEVCDecoderConfigurationRecord, samples: [HEVCAccessUnit]) = {
        // The fixture is part of the checkout: a missing one is a broken checkout.
        let (record, samples) = try! HEVCDecoderConfigurationRecord.hvcc(
            fromAnnexB: try! TestFixtures.data("hevc/main_gop_bframes_cra.265"), parameterSetsInBand: false)
        return (record, Array(samples.prefix(20)))
    }()

    /// Sends the samples 40 ms apart, presentation 80 ms after decoding for every other one.
    static func publish(_ publisher: RTMPPublisher) async throws {
        for (index, sample) in stream.samples.enumerated() {
            try await publisher.send(sample: sample.data, format: .hevc(stream.record), isKeyframe: sample.isIRAP,
                                     decodeTime: .milliseconds(40 * index), presentationTime: .milliseconds(40 * index + (index % 2) * 80))
        }
        await publisher.finish()
    }

    /// The events' H.265 frames and sequence headers, checked against what was published.
    static func expectPublished(_ events: [FLVReader.Event], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let announced = events.first.flatMap { if case .formatChanged(let format) = $0 { format } else { nil } }
        #expect(announced?.configurationRecordBytes == stream.record.bytes, sourceLocation: sourceLocation)
        #expect(events.first == .formatChanged(.hevc(stream.record)), sourceLocation: sourceLocation)
        let frames = events.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
        #expect(frames.map(\.data) == stream.samples.map(\.data), sourceLocation: sourceLocation)
        #expect(frames.map(\.hevcAccessUnit?.nalUnitTypes) == stream.samples.map(\.nalUnitTypes), sourceLocation: sourceLocation)
        #expect(frames.map(\.isKeyframe) == stream.samples.map(\.isIRAP), sourceLocation: sourceLocation)
        #expect(frames.map(\.decodeTime) == stream.samples.indices.map { Int64(40 * $0) }, sourceLocation: sourceLocation)
        #expect(frames.map(\.compositionTime) == stream.samples.indices.map { Int32(($0 % 2) * 80) }, sourceLocation: sourceLocation)
        #expect(frames.allSatisfy { $0.syntax == .enhanced }, sourceLocation: sourceLocation)
        #expect(frames.allSatisfy { $0.format?.codec == .hevc && $0.h264AccessUnit == nil }, sourceLocation: sourceLocation)
        #expect(events.last == .endOfSequence(timestamp: Int64(40 * (stream.samples.count - 1))), sourceLocation: sourceLocation)
    }

    @Test func publisherToIngestServer() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTMPIngestServer.start(host: "127.0.0.1", port: 0, group: group, app: "live", streamKey: "key")
        let received = Task { () -> [FLVReader.Event] in
            var publishers = server.publishers.makeAsyncIterator()
            guard let publisher = await publishers.next() else { return [] }
            var events: [FLVReader.Event] = []
            for await event in publisher { events.append(event) }
            return events
        }
        // Legacy syntax asked for: H.265 goes in hvc1 tags all the same.
        let publisher = try await RTMPPublisher.connect(to: server.url(host: "127.0.0.1", app: "live", streamKey: "key"), group: group)
        try await Self.publish(publisher)
        try Self.expectPublished(await received.value)
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// A relay's RTMP source (`RelaySource.rtmp`) of an H.265 publisher: H.265 frames in the
    /// format of the hvcC sequence header, their keyframes the IRAP pictures, their times kept.
    @Test func relaySourceCarriesHVC1() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTMPIngestServer.start(host: "127.0.0.1", port: 0, group: group, app: "live", streamKey: "key")
        let relayed = Task { () -> [LiveFrame] in
            var publishers = server.publishers.makeAsyncIterator()
            guard let publisher = await publishers.next() else { return [] }
            var frames: [LiveFrame] = []
            for try await frame in RelaySource.rtmp(publisher) { frames.append(frame) }
            return frames
        }
        let publisher = try await RTMPPublisher.connect(to: server.url(host: "127.0.0.1", app: "live", streamKey: "key"), group: group)
        try await Self.publish(publisher)
        let frames = try await relayed.value
        #expect(frames.map(\.avcc) == Self.stream.samples.map(\.data))
        #expect(frames.allSatisfy { $0.format == .hevc(Self.stream.record) })
        #expect(frames.map(\.isKeyframe) == Self.stream.samples.map(\.isIRAP))
        #expect(frames.map(\.decodeTime) == Self.stream.samples.indices.map { .milliseconds(40 * $0) })
        #expect(frames.map(\.presentationTime) == Self.stream.samples.indices.map { .milliseconds(40 * $0 + ($0 % 2) * 80) })
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test func playerReadsHVC1() async throws {
        var timeline = RTMPVideoTimeline(messageStreamId: 1, syntax: .legacy)
        var video: [RTMPMessage] = []
        for (index, sample) in Self.stream.samples.enumerated() {
            video += try timeline.messages(avcc: sample.data, format: .hevc(Self.stream.record), isKeyframe: sample.isIRAP,
                                           decodeTime: .milliseconds(40 * index),
                                           presentationTime: .milliseconds(40 * index + (index % 2) * 80), writable: true)
        }
        video += [timeline.endOfSequence()].compactMap { $0 }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedRTMPServer(group: group, behaviour: .playing(video))
        let player = try await RTMPPlayer.connect(to: server.url(), group: group)
        var events: [FLVReader.Event] = []
        for await event in player { events.append(event) }
        try Self.expectPublished(events)
        await server.close()
        try await group.shutdownGracefully()
    }

    /// What a server reads: `connect` with `fourCcList` (enhanced syntax), `onMetaData` whose
    /// `videocodecid` is the FourCC `hvc1` as a number, the size from the hvcC's SPS.
    @Test func connectAndMetadataNameHVC1() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedRTMPServer(group: group)
        var configuration = RTMPPublisher.Configuration()
        configuration.syntax = .enhanced
        let publisher = try await RTMPPublisher.connect(to: server.url(), group: group, configuration: configuration)
        try await Self.publish(publisher)
        let messages = await RTMPPublisherTests.messagesUntilDeleteStream(server)
        let connect = try RTMPCommand(parsing: try #require(messages.first { $0.type == .commandAMF0 }).payload)
        #expect(connect.commandObject["fourCcList"] == .strictArray([.string("avc1"), .string("hvc1")]))
        var reader = AMF0Reader(try #require(messages.first { $0.type == .dataAMF0 }).payload)
        let metadata = try reader.readAll()
        #expect(metadata[2]["videocodecid"] == .number(Double(0x6876_6331)))
        #expect(metadata[2]["width"] == .number(320) && metadata[2]["height"] == .number(180))
        let tags = try messages.filter { $0.type == .video }.map { try FLVVideoTag(parsing: $0.payload) }
        #expect(tags.allSatisfy { $0.codec == .hevc })
        #expect(tags.count == Self.stream.samples.count + 2)
        await server.close()
        try await group.shutdownGracefully()
    }
}
