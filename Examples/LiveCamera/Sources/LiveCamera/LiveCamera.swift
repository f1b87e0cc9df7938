// Encodes a y4m clip in a loop at its frame rate with H264Encoder's EncoderSession — a stand-in
// for a camera — and serves it with H264Streaming's RTSPServer until SIGINT or SIGTERM, and
// publishes it to each RTMP URL given (YouTube and Twitch at once, say): every output a client
// of the one Broadcaster, the RTMP publishers its sinks.
//
//     swift run LiveCamera CLIP.y4m PORT [rtmp://HOST/APP/KEY ...]
//
//     LiveCamera: serving rtsp://127.0.0.1:8554/live (320x240 at 30/1 fps)
//
// PORT 0 takes a free port (the line names it). A clip that cannot be read, a port that
// cannot be bound or an RTMP server that refuses the publish is one line on standard error and
// exit status 1; a signal ends it with 0.
import Foundation
import H264
import H264Encoder
import MediaContainers
import H264Streaming
import NIOPosix

@main
struct LiveCamera {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 2, let port = Int(arguments[1]), (0...65_535).contains(port) else {
            fail("usage: LiveCamera CLIP.y4m PORT [RTMP-URL ...]", status: 2)
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let (header, pictures) = try Y4MStreamReader.frames(in: Data(contentsOf: URL(fileURLWithPath: arguments[0])))
            guard !pictures.isEmpty else { fail("LiveCamera: \(arguments[0]) has no frames") }

            // The stream's publishing handle: every encoded frame goes to each viewer, and a
            // viewer that joins asks for an IDR (the doorbell wakes the pacing loop for it).
            let doorbell = Doorbell()
            let live = Broadcaster(queueLimit: 30, onKeyframeRequest: doorbell.ring)
            var configuration = EncoderConfiguration.liveCapture   // no lookahead, no B-frames
            configuration.expectedFrameRate = header.rate.framesPerSecond
            let encoder = try EncoderSession(width: header.width, height: header.height,
                                             configuration: configuration) { frame in
                live.broadcast(frame.compressedFrame)   // each output's form is made once, there
            }
            defer { encoder.invalidate() }

            // Each RTMP server gets the stream through a sink of its own: one that cannot keep
            // up is cut back to the next IDR without slowing the viewers or the others.
            var publishers: [RTMPPublisher] = []
            for url in arguments.dropFirst(2) { publishers.append(try await RTMPPublisher.connect(to: url, group: group)) }
            let sinks = publishers.map { live.attach($0) }

            let server = try await RTSPServer.start(host: "127.0.0.1", port: port, group: group)
            guard let format = try encoder.prepare().h264 else { fail("LiveCamera: the session does not encode H.264") }
            server.mount("/live", broadcaster: live, format: format)
            // Unbuffered, so a script reading the URL from a pipe gets it at once.
            FileHandle.standardOutput.write(Data(("LiveCamera: serving \(server.url(host: "127.0.0.1", path: "/live")) "
                + "(\(header.width)x\(header.height) at \(header.rate) fps)\n").utf8))

            // SIGINT and SIGTERM cancel the pacing loop (H264Streaming's StopSignal); the server then shuts down.
            let pacing = Task {
                try await stream(pictures, header: header, to: encoder, live: live, doorbell: doorbell)
            }
            let result = try await StopSignal.catching(onStop: { pacing.cancel() }) { await pacing.result }
            await live.closeAll(flushing: false)
            for sink in sinks { _ = try? await sink.value }
            for publisher in publishers { await publisher.finish() }
            await server.shutdown()
            try await group.shutdownGracefully()
            try result.get()
        } catch {
            try? await group.shutdownGracefully()
            fail("LiveCamera: \(error)")
        }
    }

    /// Encodes the clip's pictures over and over, each when it is due, until the task is cancelled.
    static func stream(_ pictures: [[UInt8]], header: Y4MHeader, to encoder: EncoderSession,
                       live: Broadcaster, doorbell: Doorbell) async throws {
        var schedule = FrameSchedule(interval: header.rate.frameDuration, start: .now)
        var index = 0
        while !Task.isCancelled {
            // Frame i is due at start + i × interval; one interval early when a viewer waits
            // for an IDR, so it starts at once.
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

    static func fail(_ message: String, status: Int32 = 1) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(status)
    }
}
