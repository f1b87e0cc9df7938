import AudioCodecs
import Foundation
import H264
@testable import H264Streaming
import H264TestSupport
import MediaContainers
import NIOPosix
import RTMPMessages
import Testing

/// Audio over RTMP: ``RTMPPublisher/send(audio:format:timestamp:)`` (AAC silence from
/// `AACSilence`, 44.1 kHz mono) beside H.264, taken by our ``RTMPIngestServer`` — audio frames
/// come through the same `.frame` events as video — and by nginx-rtmp, whose recording FFmpeg
/// reads as an h264 and an aac stream and decodes without an error line.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTMPAudioTests {
    /// 44.1 kHz mono AAC LC and its silent frame.
    static let format = AudioSpecificConfig(samplingFrequency: 44_100, channelConfiguration: 1).formatDescription
    static let silence = try! AACSilence.frame(channelConfiguration: 1)

    /// `videoFrames` of the fixture 40 ms apart and the AAC frames of the same span (1024/44100 s
    /// apart), interleaved by time, sent by `publisher`; returns the audio times sent.
    static func publish(_ publisher: RTMPPublisher, videoFrames: Int) async throws -> [Duration] {
        let frames = StreamingFixtures.stream.frames
        let audioCount = videoFrames * 40 * 44_100 / (1024 * 1000)
        let audioTime = { (index: Int) in Duration.milliseconds(Int64(index) * 1024 * 1000 / 44_100) }
        var video = 0, audio = 0
        while video < videoFrames || audio < audioCount {
            if video < videoFrames && (audio == audioCount || .milliseconds(40 * video) <= audioTime(audio)) {
                let frame = frames[video % frames.count]
                try await publisher.send(sample: frame.avcc, format: try #require(frame.format), isKeyframe: frame.isKeyframe,
                                         decodeTime: .milliseconds(40 * video), presentationTime: .milliseconds(40 * video))
                video += 1
            } else {
                try await publisher.send(audio: silence, format: format, timestamp: audioTime(audio))
                audio += 1
            }
        }
        return (0..<audioCount).map(audioTime)
    }

    /// Sans I/O: the AAC sequence header goes before the first frame, not again for the same
    /// format, again for another format and after a restart (a reconnection); timestamps never
    /// go back; a frame while not writable is dropped and counted.
    @Test func audioTimelineSendsTheSequenceHeaderWhenDue() throws {
        var timeline = RTMPAudioTimeline()
        let stereo = AudioSpecificConfig(samplingFrequency: 44_100, channelConfiguration: 2).formatDescription
        func send(_ format: AudioFormatDescription, at milliseconds: Int64, writable: Bool = true) throws -> [[UInt8]] {
            try timeline.messages([0x21], format: format, milliseconds: milliseconds, messageStreamId: 1, writable: writable).map {
                #expect($0.type == .audio && $0.messageStreamId == 1)
                return $0.payload
            }
        }
        let header = try FLVAudioTag.sequenceHeader(Self.format).serialized()
        #expect(try send(Self.format, at: 0) == [header, [0xAF, 0x01, 0x21]])
        #expect(try send(Self.format, at: 23) == [[0xAF, 0x01, 0x21]])
        #expect(try send(Self.format, at: 46, writable: false) == [])
        #expect(try send(stereo, at: 69) == [try FLVAudioTag.sequenceHeader(stereo).serialized(), [0xAF, 0x01, 0x21]])
        timeline.restart()
        // A frame not later than the last sent (a source's timeline that stepped back) is dropped:
        // two audio frames at one time are refused by players.
        #expect(try send(stereo, at: 69) == [])
        #expect(try send(stereo, at: 92).count == 2)
        #expect(timeline.lastTimestamp == 92)
        #expect(timeline.framesSent == 4 && timeline.framesDropped == 2 && timeline.sequenceHeaders == 3)
    }

    /// `announceAudio`'s messages: the AAC sequence header alone, before any frame (a player
    /// then knows the track before the first video keyframe); the first frame of that format
    /// goes without another; G.711 has no header to announce.
    @Test func anAnnouncedTrackSendsItsSequenceHeaderOnce() throws {
        var timeline = RTMPAudioTimeline()
        let header = try FLVAudioTag.sequenceHeader(Self.format).serialized()
        #expect(try timeline.announcement(of: Self.format, messageStreamId: 1, writable: true).map(\.payload) == [header])
        #expect(try timeline.announcement(of: Self.format, messageStreamId: 1, writable: true).isEmpty)
        let first = try timeline.messages([0x21], format: Self.format, milliseconds: 0, messageStreamId: 1, writable: true)
        #expect(first.map(\.payload) == [[0xAF, 0x01, 0x21]])
        #expect(try timeline.announcement(of: .g711(.pcma), messageStreamId: 1, writable: true).isEmpty)
        #expect(timeline.sequenceHeaders == 1)
    }

    /// In the event queues' keyframe gate an audio frame is never a keyframe (false): every
    /// audio frame is a keyframe of its own track and must not reopen the gate inside a video
    /// GOP; a video frame keeps its flag.
    @Test func audioFramesDoNotOpenTheKeyframeGate() {
        let audio = FLVReader.Event.frame(FLVFrame(data: Self.silence, audioFormat: Self.format, timestamp: 0))
        let video = FLVReader.Event.frame(FLVFrame(data: [0, 0, 0, 1, 0x41], format: .h264(StreamingFixtures.format), decodeTime: 0,
                                                   compositionTime: 0, frameType: .interFrame, syntax: .legacy))
        let keyframe = FLVReader.Event.frame(FLVFrame(data: [0, 0, 0, 1, 0x65], format: .h264(StreamingFixtures.format), decodeTime: 0,
                                                      compositionTime: 0, frameType: .keyframe, syntax: .legacy))
        #expect(audio.keyframeFlag == false)
        #expect(video.keyframeFlag == false)
        #expect(keyframe.keyframeFlag == true)
    }

    /// Our ingest server hands out the publisher's audio frames — the silent frame's bytes, the
    /// AAC format, the times sent — through `.frame`, between the video frames, which come as
    /// they went.
    @Test func ingestServerDeliversAudioFrames() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTMPIngestServer.start(host: "127.0.0.1", port: 0, group: group, app: "live", streamKey: "key")
        let received = Task { () -> [FLVReader.Event] in
            var publishers = server.publishers.makeAsyncIterator()
            guard let publisher = await publishers.next() else { return [] }
            var events: [FLVReader.Event] = []
            for await event in publisher { events.append(event) }
            return events
        }
        let publisher = try await RTMPPublisher.connect(to: server.url(host: "127.0.0.1", app: "live", streamKey: "key"), group: group)
        let audioTimes = try await Self.publish(publisher, videoFrames: 20)
        await publisher.finish()
        let frames = await received.value.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
        let audio = frames.filter { $0.audioFormat != nil }, video = frames.filter { $0.format != nil }
        #expect(audio.count == audioTimes.count && audio.count == 34)
        #expect(audio.allSatisfy { $0.data == Self.silence && $0.audioFormat == Self.format })
        #expect(audio.map { Duration.milliseconds($0.decodeTime) } == audioTimes)
        #expect(video.map(\.data) == StreamingFixtures.stream.frames.prefix(20).map(\.avcc))
        let stats = publisher.statistics
        #expect(stats.audioFramesSent == 34 && stats.audioSequenceHeaders == 1 && stats.framesSent == 20, "\(stats)")
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// ``RTMPPlayer`` playing from nginx-rtmp gets the publisher's audio through `.frame`: every
    /// audio frame the silent frame's bytes in the AAC format sent (nginx gives a late player the
    /// sequence header first), beside video frames, until the publisher finishes.
    @Test func playerGetsAudioFromNginx() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-rtmp-audio-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMPServer(in: directory, record: false)
        defer { nginx.kill() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let publisher = try await RTMPPublisher.connect(to: nginx.url(key: "play"), group: group)
        let player = try await RTMPPlayer.connect(to: nginx.url(key: "play"), group: group)
        let played = Task { () -> [FLVFrame] in
            var frames: [FLVFrame] = []
            for await event in player { if case .frame(let frame) = event { frames.append(frame) } }
            return frames
        }
        _ = try await Self.publish(publisher, videoFrames: 50)
        await publisher.finish()
        let frames = await played.value
        let audio = frames.filter { $0.audioFormat != nil }
        #expect(audio.count > 40 && frames.count > audio.count, "\(audio.count) audio of \(frames.count) frames")
        #expect(audio.allSatisfy { $0.data == Self.silence && $0.audioFormat == Self.format })
        #expect(player.ending == .unpublished)
        try await group.shutdownGracefully()
    }

    /// nginx-rtmp records H.264 and AAC: ffprobe sees an h264 and an aac stream, and FFmpeg
    /// decodes the recording without an error line.
    @Test func nginxRecordingHasBothTracks() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-rtmp-audio-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try NginxRTMPServer(in: directory)
        defer { nginx.kill() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let publisher = try await RTMPPublisher.connect(to: nginx.url(key: "av"), group: group)
        _ = try await Self.publish(publisher, videoFrames: 50)
        await publisher.finish()
        let recording = nginx.recording(key: "av")
        let codecs = { () -> [String] in
            let probe = try? Subprocess.run("timeout", ["30", "ffprobe", "-v", "error", "-show_streams", recording])
            return String(decoding: probe?.stdout ?? [], as: UTF8.self).split(separator: "\n")
                .filter { $0.hasPrefix("codec_name=") }.map { String($0.dropFirst("codec_name=".count)) }.sorted()
        }
        #expect(BoundedPolling.waitFor(seconds: 10) { codecs() == ["aac", "h264"] }, "ffprobe: \(codecs()); nginx: \(nginx.process.stderr)")
        let decoded = try Subprocess.run("timeout", ["30", "ffmpeg", "-nostdin", "-v", "error", "-i", recording, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        try await group.shutdownGracefully()
    }
}
