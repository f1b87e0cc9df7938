import Foundation
import H264
@testable import H264Streaming
import H264TestSupport
import NIOPosix
import Testing

/// ``RTMPPublisher/Configuration/reconnect`` and ``RTMPPlayer/Configuration/reconnect`` against
/// nginx-rtmp (`record all`) killed in the middle of a publish and started again on the same
/// port: the publisher publishes again by itself, from the next IDR with the sequence header,
/// and nginx's recording after the restart is what FFmpeg decodes without an error; the player
/// plays again in the same events.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct RTMPReconnectTests {
    /// Sends the fixture's frames, looping, 40 ms apart on the media clock (as fast as the
    /// connection takes them), until `done` says so or `limit` frames went.
    static func publish(_ publisher: RTMPPublisher, from index: inout Int, limit: Int = 2000,
                        until done: (RTMPPublisher.Statistics) async -> Bool) async throws {
        let frames = StreamingFixtures.stream.frames
        let deadline = ContinuousClock.now + .seconds(20)
        while await !done(publisher.statistics) {
            try #require(index < limit && ContinuousClock.now < deadline, "statistics: \(publisher.statistics)")
            let frame = frames[index % frames.count]
            let time = Duration.milliseconds(40 * index)
            try await publisher.send(sample: frame.avcc, format: try #require(frame.format), isKeyframe: frame.isKeyframe,
                                     decodeTime: time, presentationTime: time)
            index += 1
            // Pacing of a live source, cut short: the connection's failure is noticed between frames.
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test func publishesAgainAfterNginxRestarts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-rtmp-reconnect-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try NginxRTMPServer(in: directory.appendingPathComponent("first"))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = RTMPPublisher.Configuration()
        configuration.reconnect = .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
        let publisher = try await RTMPPublisher.connect(to: first.url(key: "key"), group: group, configuration: configuration)
        var index = 0
        try await Self.publish(publisher, from: &index) { $0.framesSent >= 20 }
        let player = try await RTMPPlayer.connect(to: first.url(key: "key"), group: group, configuration: .init(reconnect: configuration.reconnect))
        let played = Locked(0)
        let playing = Task {
            for await event in player { if case .frame = event { played.withLock { $0 += 1 } } }
        }
        try await Self.publish(publisher, from: &index) { _ in played.withLock { $0 } >= 5 }
        first.kill()
        let playedBefore = played.withLock { $0 }
        // Frames go on while nginx is down: the publisher notices the close and drops them.
        try await Self.publish(publisher, from: &index) { $0.framesDropped > 0 }
        let second = try NginxRTMPServer(in: directory.appendingPathComponent("second"), port: first.port)
        defer { second.kill() }
        try await Self.publish(publisher, from: &index) { $0.reconnects == 1 }
        let resumed = publisher.statistics
        try await Self.publish(publisher, from: &index) { $0.framesSent >= resumed.framesSent + 30 && played.withLock { $0 } >= playedBefore + 20 }
        player.stop()
        await playing.value
        #expect(player.ending == .stopped, "the player played on after the restart")
        await publisher.finish()
        let stats = publisher.statistics
        #expect(stats.reconnects == 1 && stats.sequenceHeaders == 2, "\(stats)")
        // The recording of the second nginx: from an IDR, every frame decodes.
        let recording = second.recording(key: "key")
        let probe = { try? Subprocess.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                                      "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", recording]) }
        let recorded = BoundedPolling.waitFor(seconds: 10) {
            let fields = probe().map { String(decoding: $0.stdout, as: UTF8.self) }?.split(separator: ",") ?? []
            return fields.count == 4 && fields[0] == "h264" && fields[1] == "176" && (Int(fields[3].dropLast()) ?? 0) >= 30
        }
        #expect(recorded, "ffprobe: \(probe().map { String(decoding: $0.stdout, as: UTF8.self) + $0.stderr } ?? "-"); nginx: \(second.process.stderr)")
        let decoded = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-i", recording, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let keyframes = try Subprocess.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags",
                                                       "-of", "csv=p=0", recording])
        #expect(String(decoding: keyframes.stdout, as: UTF8.self).hasPrefix("K"), "the recording starts at an IDR")
        try await group.shutdownGracefully()
    }
}
