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
/// frame, shared by every client waiting then) — or, when the broadcaster keeps the current GOP
/// (``init(queueLimit:keepingGOP:logger:onKeyframeRequest:)`` with a ``GOPKeeping``, for a relay
/// that cannot force an IDR upstream), starts at once with the kept frames from the last IDR on,
/// written back to back and before any live frame, then the live ones. A client with `queueLimit` frames written but
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
        /// Registered, about to be handed the kept GOP on its event loop; live frames pass it by
        /// until then (the kept GOP takes them meanwhile).
        var joining = false
    }

    private struct State {
        var clients: [Int: Client] = [:]
        var nextId = 1
        var totalClients = 0
        var maxConcurrent = 0
        var overflows = 0
        var startsFromKeptGOP = 0
        var kept: KeptGOP?
    }

    /// What the stream has served so far.
    public struct Statistics: Sendable, Equatable {
        /// Clients that joined, in all.
        public var clients: Int
        /// The most clients at one time.
        public var maxConcurrent: Int
        /// Times a client fell `queueLimit` frames behind and was skipped to the next IDR.
        public var overflows: Int
        /// Clients that started with the kept GOP instead of waiting for an IDR (see ``GOPKeeping``).
        public var startsFromKeptGOP: Int
    }

    private let state: Locked<State>
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
    ///   - keepingGOP: keep the frames since the last IDR, within these limits, and start each
    ///     client that joins with them (a relay); nil (an encoder that can force an IDR): a
    ///     client that joins asks for an IDR and waits for it.
    ///   - logger: gets an `info` message for each join, leave and skip.
    ///   - onKeyframeRequest: called (outside the lock) whenever a client asks for an IDR, so
    ///     the pacer can encode the next frame early instead of waiting for its deadline.
    public init(queueLimit: Int, keepingGOP: GOPKeeping? = nil, logger: Logger = .streamingSilent,
                onKeyframeRequest: @escaping @Sendable () -> Void = {}) {
        var state = State()
        state.kept = keepingGOP.map { limits in
            KeptGOP(limits: GOPKeeping(byteLimit: limits.byteLimit, frameLimit: min(limits.frameLimit, max(1, queueLimit - 1))))
        }
        self.state = Locked(state)
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
        state.withLock { Statistics(clients: $0.totalClients, maxConcurrent: $0.maxConcurrent, overflows: $0.overflows,
                                startsFromKeptGOP: $0.startsFromKeptGOP) }
    }

    /// The clients registered now (streaming or waiting for an IDR).
    public var clientCount: Int { state.withLock { $0.clients.count } }

    /// True when a client is waiting for an IDR it asked for.
    public var keyframeWanted: Bool { keyframeRequested.load(ordering: .acquiring) }

    /// True when the next frame should be an IDR (a client is waiting for one); clears the request.
    public func takeKeyframeRequest() -> Bool {
        keyframeRequested.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// Registers a connected client; it waits for the next IDR, which it asks for — or, when
    /// the broadcaster keeps the GOP and holds one, it is written the kept frames (on its
    /// channel's event loop, in a turn of its own after this call) and then every live frame. The channel is written ``LiveFrame``s (wrapped in an internal message
    /// its handler unwraps: use the servers' handlers, or a channel that only counts writes).
    ///
    /// - Returns: the client's number, for ``remove(_:)``.
    public func add(_ channel: any Channel) -> Int {
        let address = channel.remoteAddress.map { "\($0)" } ?? "?"
        let (id, keeping) = state.withLock { s in
            let id = s.nextId
            s.nextId += 1
            let keeping = s.kept != nil
            s.clients[id] = Client(channel: channel, address: address, askedForKeyframe: !keeping, joining: keeping)
            s.totalClients += 1
            s.maxConcurrent = max(s.maxConcurrent, s.clients.count)
            if !keeping { keyframeRequested.store(true, ordering: .releasing) }
            return (id, keeping)
        }
        logger.info("client \(id) joined from \(address)")
        eventSink.yield(.viewerJoined(client: id, address: address))
        if keeping {
            // Later on the loop, so the caller (a handler) has recorded the id before frames come.
            channel.eventLoop.execute { self.startFromKeptGOP(id, channel: channel) }
        } else {
            keyframeRequestMade()
        }
        return id
    }

    /// On `channel`'s event loop: hands client `id` the kept GOP and makes it stream, or (none
    /// kept) makes it ask for an IDR. Until then live frames pass the client by (the kept GOP
    /// takes them); from then on their writes, made off this loop, are queued on it behind
    /// these, and one broadcast on this loop runs before or after this whole turn: no live
    /// frame can come before the kept ones, and none is missed.
    private func startFromKeptGOP(_ id: Int, channel: any Channel) {
        let kept: [LiveFrame]? = state.withLock { s in
            guard var client = s.clients[id], client.joining else { return nil }
            client.joining = false
            let frames = s.kept?.startingFrames
            if let frames {
                client.streaming = true
                client.queuedFrames += frames.count
                client.framesSent += frames.count
                s.startsFromKeptGOP += 1
            } else {
                client.askedForKeyframe = true
                keyframeRequested.store(true, ordering: .releasing)
            }
            s.clients[id] = client
            return frames ?? []
        }
        guard let kept else { return }
        guard !kept.isEmpty else {
            keyframeRequestMade()
            return
        }
        logger.info("client \(id) starts with the kept GOP (\(kept.count) frames)")
        for (index, frame) in kept.enumerated() {
            send(.frame(frame), to: channel, id: id, flushing: index == kept.count - 1)
        }
    }

    /// Writes `message` to client `id`, which counts as queued until the write completes; a
    /// failed write closes the channel.
    private func send(_ message: BroadcastWrite, to channel: any Channel, id: Int, flushing: Bool) {
        let written = flushing ? channel.writeAndFlush(message) : channel.write(message)
        written.whenComplete { result in
            self.state.withLock { s in s.clients[id]?.queuedFrames -= 1 }
            if case .failure = result { channel.close(promise: nil) }
        }
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
            s.kept?.append(frame)
            var stillWaiting = false
            for (id, var client) in s.clients where !client.joining {
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
        // One turn on each event loop writes to all of its clients: a write (and its completion
        // callback) from off the loop would each be a task of its own, two cross-thread hops per
        // client and frame (100 viewers: 6,000 a second at 30 fps).
        var loops: [(loop: any EventLoop, targets: [(id: Int, channel: any Channel)])] = []
        for target in targets {
            let loop = target.channel.eventLoop
            if let index = loops.firstIndex(where: { $0.loop === loop }) {
                loops[index].targets.append(target)
            } else {
                loops.append((loop, [target]))
            }
        }
        for (loop, targets) in loops {
            if loop.inEventLoop {
                for target in targets { send(message, to: target.channel, id: target.id, flushing: true) }
            } else {
                loop.execute { for target in targets { self.send(message, to: target.channel, id: target.id, flushing: true) } }
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
