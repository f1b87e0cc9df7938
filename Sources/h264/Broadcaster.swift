import H264
import NIOCore
import Synchronization // Atomic (a flag, not a lock: Locked guards the client table)

/// The clients of a live stream and what each has been sent.
///
/// Every encoded frame is turned into bytes once and the same `ByteBuffer` is written to every
/// client that is streaming. A new client waits for an IDR and asks for one (forced on the next
/// frame, shared by every client waiting then). A client with `queueLimit` frames written but
/// not yet taken by the kernel is skipped: it gets nothing until its queue has drained to a
/// quarter and an IDR comes (it asks for one then). A client that left is removed when its
/// channel closes; writes to it fail quietly.
final class Broadcaster: Sendable {
    private struct Client {
        let channel: any Channel
        let address: String
        var streaming = false
        /// Waiting for an IDR it asked for.
        var askedForKeyframe = true
        var queuedFrames = 0
        var framesSent = 0
    }

    private struct State {
        var clients: [Int: Client] = [:]
        var nextId = 1
        var totalClients = 0
        var maxConcurrent = 0
        var overflows = 0
    }

    /// Statistics for the summary line.
    struct Statistics { var clients: Int; var maxConcurrent: Int; var overflows: Int }

    private let state = Locked(State())
    private let keyframeRequested = Atomic<Bool>(false)
    private let queueLimit: Int
    private let log: @Sendable (String) -> Void
    private let keyframeRequestMade: @Sendable () -> Void

    /// - Parameters:
    ///   - queueLimit: frames a client may have in flight before it is skipped to the next IDR.
    ///   - log: receives a line for each join, leave and skip.
    ///   - onKeyframeRequest: called (outside the lock) whenever a client asks for an IDR, so
    ///     the pacer can encode the next frame early instead of waiting for its deadline.
    init(queueLimit: Int, log: @escaping @Sendable (String) -> Void, onKeyframeRequest: @escaping @Sendable () -> Void = {}) {
        self.queueLimit = queueLimit
        self.log = log
        self.keyframeRequestMade = onKeyframeRequest
    }

    var statistics: Statistics {
        state.withLock { Statistics(clients: $0.totalClients, maxConcurrent: $0.maxConcurrent, overflows: $0.overflows) }
    }

    /// True when a client is waiting for an IDR it asked for.
    var keyframeWanted: Bool { keyframeRequested.load(ordering: .acquiring) }

    /// True when the next frame should be an IDR (a client is waiting for one); clears the request.
    func takeKeyframeRequest() -> Bool {
        keyframeRequested.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// Registers a connected client; it waits for the next IDR, which it asks for.
    func add(_ channel: any Channel) -> Int {
        let address = channel.remoteAddress.map { "\($0)" } ?? "?"
        let id = state.withLock { s in
            let id = s.nextId
            s.nextId += 1
            s.clients[id] = Client(channel: channel, address: address)
            s.totalClients += 1
            s.maxConcurrent = max(s.maxConcurrent, s.clients.count)
            keyframeRequested.store(true, ordering: .releasing)
            return id
        }
        keyframeRequestMade()
        log("client \(id) joined from \(address)")
        return id
    }

    /// Forgets a client whose channel closed.
    func remove(_ id: Int) {
        guard let client = state.withLock({ $0.clients.removeValue(forKey: id) }) else { return }
        log("client \(id) left after \(client.framesSent) frames")
    }

    /// Sends one encoded frame (Annex-B bytes) to every client that can take it.
    func broadcast(_ bytes: ByteBuffer, isKeyframe: Bool) {
        var targets: [(id: Int, channel: any Channel)] = []
        var overflowed: [Int] = []
        var requested = false
        state.withLock { s in
            var stillWaiting = false
            for (id, var client) in s.clients {
                if client.streaming && client.queuedFrames >= queueLimit {
                    client.streaming = false
                    client.askedForKeyframe = false
                    s.overflows += 1
                    overflowed.append(id)
                }
                if !client.streaming {
                    let drained = client.queuedFrames <= queueLimit / 4
                    if isKeyframe && drained {
                        client.streaming = true
                        client.askedForKeyframe = false
                    } else if isKeyframe {
                        client.askedForKeyframe = false // missed this one: ask again once drained
                    } else if drained && !client.askedForKeyframe {
                        client.askedForKeyframe = true
                        keyframeRequested.store(true, ordering: .releasing)
                        requested = true
                    }
                    if !client.streaming && client.askedForKeyframe { stillWaiting = true }
                }
                if client.streaming {
                    client.queuedFrames += 1
                    client.framesSent += 1
                    targets.append((id, client.channel))
                }
                s.clients[id] = client
            }
            // An IDR that served every waiting client settles earlier requests.
            if isKeyframe && !stillWaiting { keyframeRequested.store(false, ordering: .releasing) }
        }
        if requested { keyframeRequestMade() }
        for id in overflowed { log("client \(id) fell \(queueLimit) frames behind: skipped to the next IDR") }
        for target in targets {
            let channel = target.channel, id = target.id
            channel.writeAndFlush(bytes).whenComplete { result in
                self.state.withLock { s in s.clients[id]?.queuedFrames -= 1 }
                if case .failure = result { channel.close(promise: nil) }
            }
        }
    }

    /// Closes every client: at once, or after its queued frames were written (`flushing`,
    /// at most two seconds).
    func closeAll(flushing: Bool, on loop: any EventLoop) async {
        let channels = state.withLock { $0.clients.values.map(\.channel) }
        guard !channels.isEmpty else { return }
        let closed: [EventLoopFuture<Void>] = channels.map { channel in
            let promise = channel.eventLoop.makePromise(of: Void.self)
            channel.closeFuture.cascade(to: promise)
            if flushing {
                channel.writeAndFlush(ByteBuffer()).whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
            return promise.futureResult
        }
        if flushing {
            let force = loop.scheduleTask(in: .seconds(2)) { for channel in channels { channel.close(promise: nil) } }
            try? await EventLoopFuture.andAllComplete(closed, on: loop).get()
            force.cancel()
        } else {
            try? await EventLoopFuture.andAllComplete(closed, on: loop).get()
        }
    }
}

/// One client connection of `h264 serve`: registers with the broadcaster when it becomes
/// active, leaves when it closes, and ignores what the client sends.
final class BroadcastClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let broadcaster: Broadcaster
    private var id: Int?

    init(broadcaster: Broadcaster) { self.broadcaster = broadcaster }

    func channelActive(context: ChannelHandlerContext) {
        id = broadcaster.add(context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let id { broadcaster.remove(id) }
        id = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Viewers have nothing to say; what they send is dropped.
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or broken connection: the client is gone.
        context.close(promise: nil)
    }
}
