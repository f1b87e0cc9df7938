// Plays an RTSP URL (an H.264 or H.265 camera) with H264Streaming's RTSPClient, decodes it with H264Decoder's
// DecoderSession and prints one line per decoded frame:
//
//     swift run RTSPViewer rtsp://127.0.0.1:8554/live [FRAMES]
//
//     frame 1 320x240 pts 0.000
//     frame 2 320x240 pts 0.033
//
// Exits 0 after FRAMES frames (100 by default); a URL that cannot be played is one line on
// standard error and exit status 1.
import Foundation
import H264
import H264Decoder
import HEVC
import H264Streaming
import NIOPosix
import Synchronization

@main
struct RTSPViewer {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let url = arguments.first, arguments.count <= 2 else { fail("usage: RTSPViewer URL [FRAMES]", status: 2) }
        let limit = arguments.count == 2 ? Int(arguments[1]) ?? 0 : 100
        guard limit > 0 else { fail("usage: RTSPViewer URL [FRAMES] (FRAMES a positive number)", status: 2) }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            var configuration = RTSPClient.Configuration()
            configuration.idleTimeout = .seconds(10)
            let camera = try await RTSPClient.open(url: url, group: group, configuration: configuration)
            let printed = try await play(camera, limit: limit)
            await camera.close()
            try? await group.shutdownGracefully()
            guard printed >= limit else {
                fail("RTSPViewer: \(url): the stream ended after \(printed) of \(limit) frames (\(camera.ending.map { "\($0)" } ?? "?"))")
            }
        } catch {
            try? await group.shutdownGracefully()
            fail("RTSPViewer: \(error)")
        }
    }

    /// Decodes the camera's access units until `limit` frames are printed or the stream ends;
    /// returns how many were printed.
    static func play(_ camera: RTSPClient, limit: Int) async throws -> Int {
        let printed = Counter()
        // Frames come out of the decoder's queue in presentation order.
        let handler: DecoderSession.OutputHandler = { frame in
            let number = printed.increment()
            guard number <= limit else { return }
            let seconds = Double(frame.presentationTimeStamp.components.seconds)
                + Double(frame.presentationTimeStamp.components.attoseconds) / 1e18
            print("frame \(number) \(frame.width)x\(frame.height) pts \(String(format: "%.3f", seconds))")
        }
        // H.264 or H.265: the format comes from the SDP (nil when the parameter sets come in
        // band), the codec from its rtpmap; each frame carries its own format.
        let decoder = try DecoderSession(format: camera.format, configuration: .init(codec: camera.codec), outputHandler: handler)
        defer { decoder.invalidate() }
        for await event in camera {
            if case .frame(let received) = event {
                try decoder.decode(received.frame)
            }   // losses, diagnostics, reconnections: the decoder waits for the next keyframe
            if printed.value >= limit { break }
        }
        if printed.value < limit { try decoder.finishDelayedFrames() }
        try decoder.waitForAsynchronousFrames()
        return min(printed.value, limit)
    }

    static func fail(_ message: String, status: Int32 = 1) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(status)
    }
}

/// Frames printed, counted on the decoder's queue and read by the main task.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts one more and returns the new count.
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }

    var value: Int { count.load(ordering: .relaxed) }
}
