import H264
public import Logging
public import NIOCore
import Synchronization // Atomic (a flag, not a lock: Locked guards the client table)

/// The publishing handle of a live stream: its viewers and what each has been sent.
///
/// A program feeds it with ``broadcast(_:)`` (an encoder's output, as ``LiveFrame``s); the
/// viewers are the channels of ``RTSPServer`` sessions playing its mount path and of an
/// ``AnnexBFanOutServer``, or any channel registered with ``add(_:)``.
///
/// Every frame is written as one value to every client that is streaming. A new client waits for an IDR and asks for one (forced on the next
/// frame, shared by every client waiting then). A client with `queueLimit` frames written but
/// not yet taken by the kernel is skipped: it gets nothing until its queue has drained to a
/// quarter and an IDR comes (it asks for one then). A client that left is removed when its
/// channel closes; writes to it fail quietly.
///
/// The encoder hears the requests: `onKeyframeRequest` is called, and
/// ``takeKeyframeRequest()`` says whether the next frame should be an IDR.
public final class Broadcaster: Sendable {
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

    /// What the stream has served so far.
    public struct Statistics: Sendable, Equatable {
        /// Clients that joined, in all.
        public var clients: Int
        /// The most clients at one time.
        public var maxConcurrent: Int
        /// Times a client fell `queueLimit` frames behind and was skipped to the next IDR.
        public var overflows: Int
    }

    private let state = Locked(State())
    private let keyframeRequested = Atomic<Bool>(false)
    private let queueLimit: Int
    private let logger: Logger
    private let keyframeRequestMade: @Sendable () -> Void
    private let eventSink: AsyncStream<ServerEvent>.Continuation

    /// The clients' joins, skips and leaves as they happen (``ServerEvent/viewerJoined(client:address:)``,
    /// ``ServerEvent/viewerSkipped(client:frames:)``, ``ServerEvent/viewerLeft(client:framesSent:)``),
    /// for one reader; the newest ``ServerEvent/bufferLimit`` wait when nobody reads.
    public let events: AsyncStream<ServerEvent>

    /// A stream without viewers.
    ///
    /// - Parameters:
    ///   - queueLimit: frames a client may have in flight before it is skipped to the next IDR.
    ///   - logger: gets an `info` message for each join, leave and skip.
    ///   - onKeyframeRequest: called (outside the lock) whenever a client asks for an IDR, so
    ///     the pacer can encode the next frame early instead of waiting for its deadline.
    public init(queueLimit: Int, logger: Logger = .streamingSilent,
                onKeyframeRequest: @escaping @Sendable () -> Void = {}) {
        self.queueLimit = queueLimit
        self.logger = logger
        self.keyframeRequestMade = onKeyframeRequest
        (events, eventSink) = ServerEvent.makeStream()
    }

    deinit { eventSink.finish() }

    /// Ends ``events`` (once the broadcaster is no longer used): its reader gets what is left, then the end.
    public func finishEvents() { eventSink.finish() }

    /// What the stream has served so far.
    public var statistics: Statistics {
        state.withLock { Statistics(clients: $0.totalClients, maxConcurrent: $0.maxConcurrent, overflows: $0.overflows) }
    }

    /// The clients registered now (streaming or waiting for an IDR).
    public var clientCount: Int { state.withLock { $0.clients.count } }

    /// True when a client is waiting for an IDR it asked for.
    public var keyframeWanted: Bool { keyframeRequested.load(ordering: .acquiring) }

    /// True when the next frame should be an IDR (a client is waiting for one); clears the request.
    public func takeKeyframeRequest() -> Bool {
        keyframeRequested.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// Registers a connected client; it waits for the next IDR, which it asks for. The
    /// channel is written ``LiveFrame``s (wrapped in an internal message its handler unwraps:
    /// use the servers' handlers, or a channel that only counts writes).
    ///
    /// - Returns: the client's number, for ``remove(_:)``.
    public func add(_ channel: any Channel) -> Int {
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
        logger.info("client \(id) joined from \(address)")
        eventSink.yield(.viewerJoined(client: id, address: address))
        return id
    }

    /// Forgets a client whose channel closed.
    public func remove(_ id: Int) {
        guard let client = state.withLock({ $0.clients.removeValue(forKey: id) }) else { return }
        logger.info("client \(id) left after \(client.framesSent) frames")
        eventSink.yield(.viewerLeft(client: id, framesSent: client.framesSent))
    }

    /// Sends one access unit to every client that can take it.
    public func broadcast(_ frame: LiveFrame) {
        let isKeyframe = frame.isKeyframe
        let message = BroadcastWrite.frame(frame)
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
        for id in overflowed {
            logger.info("client \(id) fell \(queueLimit) frames behind: skipped to the next IDR")
            eventSink.yield(.viewerSkipped(client: id, frames: queueLimit))
        }
        for target in targets {
            let channel = target.channel, id = target.id
            channel.writeAndFlush(message).whenComplete { result in
                self.state.withLock { s in s.clients[id]?.queuedFrames -= 1 }
                if case .failure = result { channel.close(promise: nil) }
            }
        }
    }

    /// Closes every client: at once, or after its queued frames were written (`flushing`,
    /// for at most `flushTimeout`).
    public func closeAll(flushing: Bool, flushTimeout: Duration = .seconds(2)) async {
        let channels = state.withLock { $0.clients.values.map(\.channel) }
        guard let loop = channels.first?.eventLoop else { return }
        let closed: [EventLoopFuture<Void>] = channels.map { channel in
            let promise = channel.eventLoop.makePromise(of: Void.self)
            channel.closeFuture.cascade(to: promise)
            if flushing {
                channel.writeAndFlush(BroadcastWrite.flush).whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
            return promise.futureResult
        }
        if flushing {
            let force = loop.scheduleTask(in: TimeAmount(flushTimeout)) { for channel in channels { channel.close(promise: nil) } }
            try? await EventLoopFuture.andAllComplete(closed, on: loop).get()
            force.cancel()
        } else {
            try? await EventLoopFuture.andAllComplete(closed, on: loop).get()
        }
    }
}
