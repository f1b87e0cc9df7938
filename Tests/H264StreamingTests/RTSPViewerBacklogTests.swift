import Foundation
import H264
@testable import H264Streaming
import H264TestSupport
import NIOCore
import NIOPosix
import Testing

/// RTSP viewers on real loopback sockets, written by the broadcaster from their handlers (no
/// promise for a write the kernel takes at once): what each has in flight is still counted, so
/// a viewer that stops reading is cut back to the next IDR while the one beside it gets every
/// frame.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct RTSPViewerBacklogTests {
    /// A frame of one NAL unit of `size` bytes: an IDR slice or a non-IDR one.
    static func frame(isKeyframe: Bool, size: Int = 20_000) -> LiveFrame {
        let nal: [UInt8] = [isKeyframe ? 0x65 : 0x41] + [UInt8](repeating: 0x5A, count: size - 1)
        let length = UInt32(nal.count).bigEndian
        return LiveFrame(avcc: withUnsafeBytes(of: length, Array.init) + nal, formatDescription: StreamingFixtures.format,
                         isKeyframe: isKeyframe)
    }

    /// Reads `viewers` until `done` holds; false if it did not within 20 s.
    static func pump(_ viewers: [InterleavedRTSPViewer], until done: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while !done() {
            guard ContinuousClock.now < deadline else { return false }
            InterleavedRTSPViewer.pump(viewers, for: .milliseconds(10))
        }
        return true
    }

    @Test func aStalledViewerIsCutBackWhileTheOtherGetsEveryFrame() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = RTSPServer.Configuration()
        configuration.sendBufferSize = 4096
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group, configuration: configuration)
        let port = try #require(server.localAddress?.port)
        let broadcaster = Broadcaster(queueLimit: 4)
        server.mount("/live", broadcaster: broadcaster, format: StreamingFixtures.format)
        let url = "rtsp://127.0.0.1:\(port)/live"
        let fast = try InterleavedRTSPViewer(url: url, port: port)
        let slow = try InterleavedRTSPViewer(url: url, port: port) { fd in
            var size: Int32 = 4096
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        // Each joins in the turn that writes its PLAY answer.
        #expect(Self.pump([], until: { broadcaster.clientCount == 2 }))

        // 40 frames of 20 kB, each read by the fast viewer before the next: the slow one, which
        // reads nothing, has far more than 4 frames' worth beyond what the kernel holds.
        var sent = 0
        for index in 0..<40 {
            broadcaster.broadcast(Self.frame(isKeyframe: index == 0))
            sent += 1
            #expect(Self.pump([fast], until: { fast.frames == sent }), "the fast viewer got frame \(sent)")
        }
        #expect(broadcaster.statistics.overflows == 1, "the slow viewer was cut back once")

        // The slow viewer reads again: once drained it asks for an IDR, and resumes there.
        var drained = false
        while !drained && sent < 200 {
            InterleavedRTSPViewer.pump([slow], for: .milliseconds(10))
            broadcaster.broadcast(Self.frame(isKeyframe: false))
            sent += 1
            drained = broadcaster.takeKeyframeRequest()
            #expect(Self.pump([fast], until: { fast.frames == sent }))
        }
        #expect(drained, "the slow viewer asked for an IDR once it had read its backlog")
        // Both read now, each frame before the next (a burst would outrun the 4-frame queue).
        let before = slow.frames
        for index in 0..<5 {
            broadcaster.broadcast(Self.frame(isKeyframe: index == 0))
            sent += 1
            #expect(Self.pump([fast, slow], until: { fast.frames == sent && slow.frames >= before + index + 1 }))
        }
        #expect(broadcaster.statistics.overflows == 1, "no viewer was cut back again")
        #expect(fast.frames == sent && slow.frames < sent, "fast \(fast.frames), slow \(slow.frames) of \(sent)")
        #expect(fast.strayBytes == 0 && slow.strayBytes == 0, "both streams stayed in their framing")
        fast.close()
        slow.close()
        await server.shutdown()
        try await group.shutdownGracefully()
    }
}
