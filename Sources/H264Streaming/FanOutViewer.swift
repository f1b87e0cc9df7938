import NIOCore
import Synchronization

/// A viewer's connection handler that writes the broadcaster's frames itself, on its event
/// loop, from its own place in the pipeline down: the frame does not travel the pipeline as a
/// wrapped message, and a write the kernel took at once needs no promise (100 viewers at 30 fps
/// are 3,000 writes a second; the promise, its callback and the broadcaster's lock per write were
/// a tenth of the fan-out's user time).
protocol FanOutViewer: AnyObject {
    /// Writes each of `frames`' forms for this viewer, in order, then flushes once.
    ///
    /// - Returns: nil when nothing of them is left to write (the kernel took them, or the viewer
    ///   dropped them), else a future that completes once they are all written (and fails with
    ///   the write).
    func writeFrames(_ frames: [FanOutFrame]) -> EventLoopFuture<Void>?
}

/// What a client has been handed but the kernel has not yet taken: frames and bytes, counted up
/// by the broadcast that admits a frame (under the broadcaster's lock) and down on the client's
/// event loop once the write is done, without that lock.
final class ClientBacklog: Sendable {
    private let frames = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)

    /// Frames in flight.
    var frameCount: Int { frames.load(ordering: .relaxed) }
    /// Bytes in flight.
    var byteCount: Int { bytes.load(ordering: .relaxed) }

    /// Counts `frameCount` frames of `byteCount` bytes handed to the client.
    func add(frames frameCount: Int, bytes byteCount: Int) {
        frames.add(frameCount, ordering: .relaxed)
        bytes.add(byteCount, ordering: .relaxed)
    }

    /// Counts `frameCount` frames of `byteCount` bytes as written.
    func written(frames frameCount: Int, bytes byteCount: Int) {
        frames.subtract(frameCount, ordering: .relaxed)
        bytes.subtract(byteCount, ordering: .relaxed)
    }
}

/// Where one client's share of a broadcast goes: its channel, its backlog and, for a
/// ``FanOutViewer``, the handler that writes it.
struct FanOutTarget: Sendable {
    let channel: any Channel
    let backlog: ClientBacklog
    /// The handler, usable on `channel`'s event loop only.
    let viewer: NIOLoopBound<any FanOutViewer>?
    /// The client takes the video track too: its audio frames may wait for the next picture's
    /// write (``Broadcaster``'s held audio).
    let takesVideo: Bool
}
