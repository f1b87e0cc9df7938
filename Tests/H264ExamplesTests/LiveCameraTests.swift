import Foundation
import H264
import H264Decoder
import H264Encoder
import MediaContainers
import H264Streaming
import H264TestSupport
import NIOPosix
import Synchronization
import Testing

/// The library calls of Examples/LiveCamera (EncoderSession → Broadcaster → RTSPServer) and of
/// Examples/RTSPViewer (RTSPClient → DecoderSession), against each other and against real
/// peers: gst-rtsp-server (Scripts/gst-rtsp-server.py) and ffprobe. Everything on 127.0.0.1.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5))) struct LiveCameraTests {
    @Test(arguments: [RTSPClient.Configuration.Transport.tcp, .udp])
    func viewerDecodesAHundredFramesFromTheLiveCamera(transport: RTSPClient.Configuration.Transport) async throws {
        let frames = try await LiveClipServer.serving { camera in
            try await View.decode(url: camera.url, transport: transport, frames: 100)
        }
        #expect(frames.count == 100)
        #expect(frames.allSatisfy { $0.width == 320 && $0.height == 240 })
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.pts < $1.pts }, "presentation times increase")
    }

    @Test func viewerDecodesAHundredFramesFromGStreamer() async throws {
        let gst = try GStreamerRTSPServer()
        defer { gst.kill() }
        let frames = try await View.decode(url: gst.url, transport: .tcp, frames: 100)
        #expect(frames.count == 100)
        #expect(frames.allSatisfy { $0.width == 320 && $0.height == 240 })
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.pts < $1.pts }, "presentation times increase")
    }

    /// ffprobe reads the live camera over TCP without a warning and over UDP without an error
    /// (FFmpeg's UDP receiver may warn about reordering on a loaded machine).
    @Test(arguments: [("tcp", "warning"), ("udp", "error")])
    func ffprobeReadsTheLiveCamera(transport: String, level: String) async throws {
        let probe = try await LiveClipServer.serving { camera in
            try Subprocess.run("timeout", ["30", "ffprobe", "-v", level, "-rtsp_transport", transport,
                                           "-show_entries", "stream=codec_name,width,height", camera.url])
        }
        #expect(probe.status == 0)
        #expect(probe.stderr.isEmpty, "\(probe.stderr)")
        let fields = String(decoding: probe.stdout, as: UTF8.self)
        #expect(fields.contains("codec_name=h264") && fields.contains("width=320") && fields.contains("height=240"), "\(fields)")
    }
}

/// Examples/LiveCamera in-process: the cars clip encoded in a loop at 30 fps and served at
/// `/live` on a free port.
final class LiveClipServer: Sendable {
    let url: String
    private let server: RTSPServer
    private let group: MultiThreadedEventLoopGroup
    private let encoder: EncoderSession
    private let pacing: Task<Void, any Error>

    private init(url: String, server: RTSPServer, group: MultiThreadedEventLoopGroup, encoder: EncoderSession,
                 pacing: Task<Void, any Error>) {
        (self.url, self.server, self.group, self.encoder, self.pacing) = (url, server, group, encoder, pacing)
    }

    /// Runs `body` with the server started, and stops it after, whatever `body` does.
    static func serving<T>(_ body: (LiveClipServer) async throws -> T) async throws -> T {
        let camera = try await start()
        do {
            let result = try await body(camera)
            await camera.stop()
            return result
        } catch {
            await camera.stop()
            throw error
        }
    }

    static func start() async throws -> LiveClipServer {
        let (header, pictures) = try Y4MStreamReader.frames(in: TestFixtures.data("cars_320x240_30f.y4m"))
        let doorbell = Doorbell()
        // 10 s of frames in flight per viewer: a viewer slowed by a loaded machine is not
        // skipped to the next IDR picture (which ended the run at its idle timeout).
        let live = Broadcaster(queueLimit: 300, onKeyframeRequest: doorbell.ring)
        var configuration = EncoderConfiguration.liveCapture
        configuration.expectedFrameRate = header.rate.framesPerSecond
        let encoder = try EncoderSession(width: header.width, height: header.height, configuration: configuration) { frame in
            guard let format = frame.formatDescription else { return }
            live.broadcast(LiveFrame(avcc: frame.data, formatDescription: format, isKeyframe: frame.isKeyframe,
                                     presentationTime: frame.presentationTimeStamp))
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group)
        server.mount("/live", broadcaster: live, format: try #require(try encoder.prepare().h264))
        let pacing = Task {
            var schedule = FrameSchedule(interval: header.rate.frameDuration, start: .now)
            var index = 0
            while !Task.isCancelled {
                while ContinuousClock.now < schedule.due(keyframeWanted: live.keyframeWanted), !Task.isCancelled {
                    await doorbell.sleep(until: schedule.due(keyframeWanted: live.keyframeWanted))
                }
                if Task.isCancelled { break }
                let picture = try VideoFrame(pixelFormat: .i420, width: header.width, height: header.height,
                                             contiguous: pictures[index % pictures.count])
                try encoder.encode(picture, presentationTimeStamp: schedule.interval * index, duration: schedule.interval,
                                   forceKeyframe: live.takeKeyframeRequest())
                index += 1
                schedule.advance(now: .now)
            }
        }
        return LiveClipServer(url: server.url(host: "127.0.0.1", path: "/live"), server: server, group: group,
                              encoder: encoder, pacing: pacing)
    }

    /// Stops pacing, shuts the server down and checks the loop ended without an error.
    func stop() async {
        pacing.cancel()
        let result = await pacing.result
        #expect(throws: Never.self) { try result.get() }
        encoder.invalidate()
        await server.shutdown()
        try? await group.shutdownGracefully()
    }
}

/// Examples/RTSPViewer's library calls: RTSPClient's access units into a DecoderSession.
enum View {
    struct Frame: Sendable {
        var width: Int, height: Int, pts: Duration
    }

    static func decode(url: String, transport: RTSPClient.Configuration.Transport, frames limit: Int) async throws -> [Frame] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let frames = try await decode(url: url, transport: transport, frames: limit, group: group)
            try await group.shutdownGracefully()
            return frames
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private static func decode(url: String, transport: RTSPClient.Configuration.Transport, frames limit: Int,
                               group: MultiThreadedEventLoopGroup) async throws -> [Frame] {
        var configuration = RTSPClient.Configuration()
        configuration.transport = transport
        configuration.idleTimeout = .seconds(30)
        let camera = try await RTSPClient.open(url: url, group: group, configuration: configuration)
        let decoded = Collector<Frame>()
        let decoder = try DecoderSession(formatDescription: camera.formatDescription) { frame in
            decoded.append(Frame(width: frame.width, height: frame.height, pts: frame.presentationTimeStamp))
        }
        defer { decoder.invalidate() }
        // As RTSPViewer does: no wait per access unit (waitForAsynchronousFrames drains the
        // decoder, which then needs the next IDR picture).
        for await event in camera {
            if case .frame(let received) = event {
                try decoder.decode(received.frame)
            }
            if decoded.count >= limit { break }
        }
        await camera.close()
        if decoded.count < limit {
            Issue.record("the stream ended after \(decoded.count) frames: \(camera.ending.map { "\($0)" } ?? "?"), \(camera.statistics)")
            try decoder.finishDelayedFrames()
        }
        try decoder.waitForAsynchronousFrames()
        return Array(decoded.all.prefix(limit))
    }
}
