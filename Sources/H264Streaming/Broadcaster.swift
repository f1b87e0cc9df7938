import H264
public import Logging
import MediaCore
public import NIOCore
import Synchronization // Atomic (a flag, not a lock: Locked guards the client table)

/// The one fan-out of a live stream: its viewers, its sinks, and what each has been sent.
///
/// A program feeds it with ``broadcast(_:)-(LiveFrame)`` (an encoder's output, a camera's or a publisher's
/// frames, as ``LiveFrame``s or `CompressedFrame`s, from one task at a time); every output
/// attaches to it:
/// - RTSP viewers (TCP, UDP, TLS) of an ``RTSPServer`` mount, and raw Annex-B TCP viewers of an
///   ``AnnexBFanOutServer`` (or any channel registered with ``add(_:)``): each frame's wire form
///   is made **once** for all of them — its RTP packets (one SSRC and one sequence of numbers
///   for the stream, as a shared media of gst-rtsp-server; an interleaved viewer is written the
///   same bytes as every other), its Annex-B bytes only while a raw viewer plays — and written
///   to each viewer's channel on its event loop;
/// - sinks (``LiveSink``: ``RTMPPublisher``, ``RTPSender``, a program's own) and readers of
///   ``frames(limits:)``, each through a bounded ``LiveFrameStream``.
///
/// Every output starts at a keyframe and never gets a broken GOP. A new one waits for an IDR
/// and asks for one (forced on the next frame, shared by every client waiting then) — or, when
/// the broadcaster keeps the current GOP (``init(queueLimit:queueByteLimit:keepingGOP:logger:onKeyframeRequest:)``
/// with a ``GOPKeeping``, for a relay that cannot force an IDR upstream), starts at once with the
/// kept frames from the last IDR on, before any live frame. A viewer with `queueLimit` frames or
/// `queueByteLimit` bytes written but not yet taken by the kernel is cut back: it gets nothing
/// until its queue has drained to a quarter and an IDR comes (it asks for one then); a sink
/// that falls behind is cut back the same way (``LiveSinkLimits``). Neither slows the others.
/// A client that left is removed when its channel closes; writes to it fail quietly. An audio
/// frame for a viewer that takes the video too goes out with the next picture (one write and one
/// flush; at most 2 wait when no picture comes).
///
/// The encoder hears the requests: `onKeyframeRequest` is called, and
/// ``takeKeyframeRequest()`` says whether the next frame should be an IDR.
public final class Broadcaster: Sendable {
    /// What a client's connection writes: the RTP packets (an RTSP viewer), the Annex-B bytes
    /// (a raw viewer), or the frame as it is (any other channel).
    enum ClientKind: Sendable {
        case rtp, annexB, other
    }

    struct Client {
        let channel: any Channel
        let address: String
        let kind: ClientKind
        /// Open while the client streams; closed until the IDR it waits for.
        var gate = KeyframeGate()
        /// Waiting for an IDR it asked for.
        var askedForKeyframe = true
        /// Frames and bytes handed to the channel and not yet taken by the kernel.
        let backlog = ClientBacklog()
        /// The handler that writes the frames itself (an RTSP viewer's), or nil: each frame is
        /// written through the channel's pipeline.
        let viewer: NIOLoopBound<any FanOutViewer>?
        var framesSent = 0
        /// Registered, about to be handed the kept GOP on its event loop; live frames pass it by
        /// until then (the kept GOP takes them meanwhile).
        var joining = false

        /// The tracks the client's connection takes: RTSP viewers those they set up, raw
        /// Annex-B viewers and other channels the video track only.
        var takesVideo = true
        var takesAudio = false

        /// Whether the client's connection carries `frame` (a frame of a track it takes).
        func carries(_ frame: FanOutFrame) -> Bool { frame.frame.format != nil ? takesVideo : takesAudio }

        /// Where this client's writes go.
        var target: FanOutTarget { FanOutTarget(channel: channel, backlog: backlog, viewer: viewer, takesVideo: takesVideo) }
    }

    struct State {
        var clients: [Int: Client] = [:]
        var subscriptions: [Int: LiveSubscription] = [:]
        var nextId = 1
        var totalClients = 0
        var maxConcurrent = 0
        var overflows = 0
        var startsFromKeptGOP = 0
        var kept: KeptGOP?
        /// The stream's RTP packetizer, once an ``RTSPServer`` mounted the broadcaster.
        var rtp: StreamPacketizer?
        var rtpClients = 0
        var annexBClients = 0
        /// Audio frames admitted to clients that take video too, not yet written: each goes out
        /// with the next picture's write (one write and one flush, no turn of its own), or with
        /// the audio frame that makes them more than ``Broadcaster/heldAudioLimit``.
        var heldAudio: [Broadcaster.HeldWrite] = []
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

    let state: Locked<State>
    let keyframeRequested = Atomic<Bool>(false)
    let queueLimit: Int
    let queueByteLimit: Int
    let logger: Logger
    let keyframeRequestMade: @Sendable () -> Void
    let eventSink: AsyncStream<ServerEvent>.Continuation

    /// The clients' joins, skips and leaves as they happen (``ServerEvent/viewerJoined(client:address:)``,
    /// ``ServerEvent/viewerSkipped(client:frames:)``, ``ServerEvent/viewerLeft(client:framesSent:)``),
    /// for one reader; the newest ``ServerEvent/bufferLimit`` wait when nobody reads.
    public let events: AsyncStream<ServerEvent>

    /// A stream without viewers.
    ///
    /// - Parameters:
    ///   - queueLimit: frames a viewer may have in flight before it is cut back to the next IDR.
    ///   - queueByteLimit: bytes a viewer may have in flight before it is cut back to the next
    ///     IDR (each frame counted by the largest form it is written in); nil: the kept GOP's
    ///     byte limit and 8 MiB more (a joining viewer starts with up to a GOP in flight), 8 MiB
    ///     without keeping.
    ///   - keepingGOP: keep the frames since the last IDR, within these limits, and start each
    ///     client that joins with them (a relay); nil (an encoder that can force an IDR): a
    ///     client that joins asks for an IDR and waits for it.
    ///   - logger: gets an `info` message for each join, leave and skip.
    ///   - onKeyframeRequest: called whenever a client asks for an IDR, so the pacer can encode
    ///     the next frame early instead of waiting for its deadline.
    public init(queueLimit: Int, queueByteLimit: Int? = nil, keepingGOP: GOPKeeping? = nil, logger: Logger = .streamingSilent,
                onKeyframeRequest: @escaping @Sendable () -> Void = {}) {
        var state = State()
        state.kept = keepingGOP.map { limits in
            KeptGOP(limits: GOPKeeping(byteLimit: limits.byteLimit, frameLimit: min(limits.frameLimit, max(1, queueLimit - 1))))
        }
        self.state = Locked(state)
        self.queueLimit = queueLimit
        self.queueByteLimit = max(1, queueByteLimit ?? ((keepingGOP?.byteLimit ?? 0) + (8 << 20)))
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

    /// The clients registered now: viewers (streaming or waiting for an IDR) and sinks.
    public var clientCount: Int { state.withLock { $0.clients.count + $0.subscriptions.count } }

    /// True when a client is waiting for an IDR it asked for.
    public var keyframeWanted: Bool { keyframeRequested.load(ordering: .acquiring) }

    /// True when the next frame should be an IDR (a client is waiting for one); clears the request.
    public func takeKeyframeRequest() -> Bool {
        keyframeRequested.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// Records a request for an IDR and tells the producer.
    func requestKeyframe() {
        keyframeRequested.store(true, ordering: .releasing)
        keyframeRequestMade()
    }

    /// Registers a connected client; it waits for the next IDR, which it asks for — or, when
    /// the broadcaster keeps the GOP and holds one, it is written the kept frames (on its
    /// channel's event loop, in a turn of its own after this call) and then every live frame.
    /// The channel is written frames wrapped in an internal message its handler unwraps: use
    /// the servers' handlers, or a channel that only counts writes.
    ///
    /// - Returns: the client's number, for ``remove(_:)``.
    public func add(_ channel: any Channel) -> Int {
        add(channel, kind: .other)
    }

    /// ``add(_:)`` for a client whose connection writes `kind`'s form of each frame, through
    /// `viewer` (on the channel's event loop) when given.
    func add(_ channel: any Channel, kind: ClientKind, viewer: (any FanOutViewer)? = nil,
             tracks: (video: Bool, audio: Bool) = (true, false)) -> Int {
        let address = channel.remoteAddress.map { "\($0)" } ?? "?"
        let bound = viewer.map { NIOLoopBound($0, eventLoop: channel.eventLoop) }
        let (id, keeping) = state.withLock { s in
            let id = s.nextId
            s.nextId += 1
            let keeping = s.kept != nil
            s.clients[id] = Client(channel: channel, address: address, kind: kind, askedForKeyframe: !keeping, viewer: bound,
                                   joining: keeping, takesVideo: tracks.video, takesAudio: tracks.audio)
            s.count(kind, by: 1)
            s.joined()
            if !keeping { keyframeRequested.store(true, ordering: .releasing) }
            return (id, keeping)
        }
        logger.info("client \(id) joined from \(address)")
        eventSink.yield(.viewerJoined(client: id, address: address))
        if keeping {
            // Later on the loop, so the caller (a handler) has recorded the id before frames come.
            channel.eventLoop.execute { self.startFromKeptGOP(id) }
        } else {
            keyframeRequestMade()
        }
        return id
    }

    /// Registers a sink's queue: it starts with the kept GOP (offered now, before any later
    /// broadcast) or waits for the next IDR, which it asks for.
    func subscribe(limits: LiveSinkLimits) -> LiveSubscription {
        let id = state.withLock { s in
            let id = s.nextId
            s.nextId += 1
            return id
        }
        let subscription = LiveSubscription(limits: limits, wantsKeyframe: { [weak self] in self?.requestKeyframe() },
                                            onEnd: { [weak self] in self?.unsubscribe(id) })
        let kept = state.withLock { s -> Bool in
            s.subscriptions[id] = subscription
            s.joined()
            guard let frames = s.kept?.startingFrames else { return false }
            s.startsFromKeptGOP += 1
            for frame in frames { subscription.offer(frame.frame.compressedFrame) }
            return true
        }
        logger.info("sink \(id) attached\(kept ? " (starts with the kept GOP)" : "")")
        eventSink.yield(.viewerJoined(client: id, address: "sink"))
        if !kept { requestKeyframe() }
        return subscription
    }

    /// Forgets a sink whose stream ended.
    private func unsubscribe(_ id: Int) {
        guard state.withLock({ $0.subscriptions.removeValue(forKey: id) }) != nil else { return }
        logger.info("sink \(id) detached")
        eventSink.yield(.viewerLeft(client: id, framesSent: 0))
    }

    /// On `channel`'s event loop: hands client `id` the kept GOP and makes it stream, or (none
    /// kept, or kept before the client's form was made) makes it ask for an IDR. Until then live
    /// frames pass the client by (the kept GOP takes them); from then on their writes, made off
    /// this loop, are queued on it behind these, and one broadcast on this loop runs before or
    /// after this whole turn: no live frame can come before the kept ones, and none is missed.
    private func startFromKeptGOP(_ id: Int) {
        let kept: (frames: [FanOutFrame], target: FanOutTarget)? = state.withLock { s in
            guard var client = s.clients[id], client.joining else { return nil }
            client.joining = false
            var frames = s.kept?.startingFrames?.filter { client.carries($0) }
            // An RTSP viewer needs the stream's packets of every frame (kept before the mount: none).
            if client.kind == .rtp, frames?.contains(where: { $0.rtp == nil }) == true { frames = nil }
            if let frames {
                _ = client.gate.admit(isKeyframe: true)
                client.backlog.add(frames: frames.count, bytes: frames.reduce(0) { $0 + $1.wireByteCount })
                client.framesSent += frames.count
                s.startsFromKeptGOP += 1
            } else {
                client.askedForKeyframe = true
                keyframeRequested.store(true, ordering: .releasing)
            }
            s.clients[id] = client
            return (frames ?? [], client.target)
        }
        guard let kept else { return }
        guard !kept.frames.isEmpty else {
            keyframeRequestMade()
            return
        }
        logger.info("client \(id) starts with the kept GOP (\(kept.frames.count) frames)")
        send(kept.frames, to: kept.target)
    }

    /// On the target's event loop: writes `frames` to it in order and flushes once; they count
    /// in its backlog until written, and a failed write closes the channel. A ``FanOutViewer``
    /// writes them itself (no promise when the kernel takes them at once); another channel
    /// through its pipeline.
    func send(_ frames: [FanOutFrame], to target: FanOutTarget) {
        guard !frames.isEmpty else { return }
        let count = frames.count, bytes = frames.reduce(0) { $0 + $1.wireByteCount }
        let backlog = target.backlog, channel = target.channel
        let pending: EventLoopFuture<Void>?
        if let viewer = target.viewer {
            pending = viewer.value.writeFrames(frames)
        } else {
            for frame in frames.dropLast() { channel.write(BroadcastWrite.frame(frame), promise: nil) }
            // Writes complete in order: the last one's promise answers for them all.
            pending = channel.writeAndFlush(BroadcastWrite.frame(frames[count - 1]))
        }
        guard let pending else {
            backlog.written(frames: count, bytes: bytes)
            return
        }
        pending.whenComplete { result in
            backlog.written(frames: count, bytes: bytes)
            if case .failure = result { channel.close(promise: nil) }
        }
    }

    /// Forgets a client whose channel closed.
    public func remove(_ id: Int) {
        guard let client = state.withLock({ s -> Client? in
            guard let client = s.clients.removeValue(forKey: id) else { return nil }
            s.count(client.kind, by: -1)
            return client
        }) else { return }
        logger.info("client \(id) left after \(client.framesSent) frames")
        eventSink.yield(.viewerLeft(client: id, framesSent: client.framesSent))
    }

    /// Closes every client: at once, or after its queued frames were written (`flushing`,
    /// for at most `flushTimeout`); ends every sink's frames (after those queued, `flushing`).
    public func closeAll(flushing: Bool, flushTimeout: Duration = .seconds(2)) async {
        if flushing { writeHeldAudio() }
        let (channels, subscriptions) = state.withLock { ($0.clients.values.map(\.channel), Array($0.subscriptions.values)) }
        for subscription in subscriptions {
            if flushing { subscription.finish() } else { subscription.cancel() }
        }
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

extension Broadcaster.State {
    /// Counts a client of `kind` joining (1) or leaving (−1).
    mutating func count(_ kind: Broadcaster.ClientKind, by delta: Int) {
        switch kind {
        case .rtp: rtpClients += delta
        case .annexB: annexBClients += delta
        case .other: break
        }
    }

    /// Counts a client or sink that joined.
    mutating func joined() {
        totalClients += 1
        maxConcurrent = max(maxConcurrent, clients.count + subscriptions.count)
    }
}
