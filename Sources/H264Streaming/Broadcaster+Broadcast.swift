public import MediaCore
import NIOCore
import RTP
import Synchronization

/// One frame to every output: its wire forms made once, the keyframe gate of each client, and
/// one turn per event loop for the writes.
extension Broadcaster {
    /// Sends one video frame to every output that can take it (see ``broadcast(_:)-(LiveFrame)``);
    /// a frame of another media type is not sent.
    ///
    /// - Parameter frame: the frame, on the stream's timeline.
    public func broadcast(_ frame: CompressedFrame) {
        guard let live = LiveFrame(frame) else { return }
        broadcast(live)
    }

    /// Sends one access unit to every output that can take it: made into RTP packets once when
    /// RTSP viewers play (or a kept GOP may serve them), into Annex-B once when raw viewers do
    /// (unless the producer gave ``LiveFrame/annexB``), offered to every sink's bounded queue.
    /// Call it from one task at a time: frames go out in the order of the calls.
    ///
    /// - Parameter frame: the frame.
    public func broadcast(_ frame: LiveFrame) {
        let isKeyframe = frame.isKeyframe
        var targets: [FanOutTarget] = []
        var overflowed: [Int] = []
        var requested = false
        let (shared, subscriptions, writes): (FanOutFrame, [LiveSubscription], [HeldWrite]) = state.withLock { s in
            let shared = makeForms(of: frame, in: &s)
            s.kept?.append(shared)
            let bytes = shared.wireByteCount
            var stillWaiting = false
            // In place: iterating the dictionary while storing into it copied every client per frame.
            var index = s.clients.startIndex
            while index != s.clients.endIndex {
                defer { s.clients.formIndex(after: &index) }
                let id = s.clients.keys[index]
                guard !s.clients.values[index].joining else { continue }
                Self.admit(&s.clients.values[index], id: id, frame: shared, bytes: bytes, limits: (queueLimit, queueByteLimit),
                           overflows: &s.overflows, overflowed: &overflowed, stillWaiting: &stillWaiting, requested: &requested,
                           targets: &targets, keyframeRequested: keyframeRequested)
            }
            let subscriptions = Array(s.subscriptions.values)
            if subscriptions.contains(where: \.waitsForKeyframe) { stillWaiting = true }
            // An IDR that served every waiting client settles earlier requests.
            if isKeyframe && !stillWaiting { keyframeRequested.store(false, ordering: .releasing) }
            return (shared, subscriptions, Self.writes(of: shared, to: targets, holding: &s.heldAudio))
        }
        if requested { keyframeRequestMade() }
        for id in overflowed {
            logger.info("client \(id) fell behind (\(queueLimit) frames or \(queueByteLimit) bytes): skipped to the next IDR")
            eventSink.yield(.viewerSkipped(client: id, frames: queueLimit))
        }
        if !subscriptions.isEmpty {
            let compressed = frame.compressedFrame
            for subscription in subscriptions { subscription.offer(compressed) }
        }
        write(writes)
    }

    /// One frame and the clients it goes to.
    typealias HeldWrite = (frame: FanOutFrame, targets: [FanOutTarget])

    /// Audio frames a client that takes video too may be held back, at most, for the next
    /// picture's write: 2 (≈ 43 ms of 48 kHz AAC) when no picture comes.
    static let heldAudioLimit = 2

    /// What to write now for `frame` admitted to `targets`: a picture goes out after the audio
    /// frames held for it; an audio frame goes at once to clients without video, and is held
    /// for the others (until more than ``heldAudioLimit`` are held: then they all go).
    private static func writes(of frame: FanOutFrame, to targets: [FanOutTarget], holding held: inout [HeldWrite]) -> [HeldWrite] {
        guard frame.frame.format == nil else {
            defer { held.removeAll(keepingCapacity: true) }
            return held + [(frame, targets)]
        }
        let holding = targets.filter(\.takesVideo)
        let now = holding.count == targets.count ? [] : targets.filter { !$0.takesVideo }
        if !holding.isEmpty { held.append((frame, holding)) }
        guard held.count > heldAudioLimit else { return now.isEmpty ? [] : [(frame, now)] }
        defer { held.removeAll(keepingCapacity: true) }
        return held + (now.isEmpty ? [] : [(frame, now)])
    }

    /// Writes the audio frames held for the next picture now (the stream is closing).
    func writeHeldAudio() {
        write(state.withLock { s in
            defer { s.heldAudio.removeAll() }
            return s.heldAudio
        })
    }

    /// One client's turn for `frame`: cut back when it has too much in flight, through its
    /// keyframe gate (asking for an IDR once drained), and a target of the write when streaming.
    private static func admit(_ client: inout Client, id: Int, frame: FanOutFrame, bytes: Int, limits: (frames: Int, bytes: Int),
                              overflows: inout Int, overflowed: inout [Int], stillWaiting: inout Bool, requested: inout Bool,
                              targets: inout [FanOutTarget], keyframeRequested: borrowing Atomic<Bool>) {
        guard client.carries(frame) else { return }
        // An audio-only viewer has no keyframes to wait for; a viewer of both tracks takes
        // audio while its video streams.
        if frame.frame.format == nil {
            guard client.takesVideo ? client.gate.isOpen : frame.rtp != nil || client.kind != .rtp else { return }
            client.backlog.add(frames: 1, bytes: bytes)
            client.framesSent += 1
            targets.append(client.target)
            return
        }
        let isKeyframe = frame.frame.isKeyframe
        let queuedFrames = client.backlog.frameCount, queuedBytes = client.backlog.byteCount
        if client.gate.isOpen && (queuedFrames >= limits.frames || queuedBytes >= limits.bytes) {
            client.gate.close()
            client.askedForKeyframe = false
            overflows += 1
            overflowed.append(id)
        }
        if !client.gate.isOpen {
            let drained = queuedFrames <= limits.frames / 4 && queuedBytes <= limits.bytes / 4
            // An RTSP viewer starts only on a frame made into the stream's packets.
            let usable = client.kind != .rtp || frame.rtp != nil
            if client.gate.admit(isKeyframe: isKeyframe && drained && usable) {
                client.askedForKeyframe = false
            } else if isKeyframe {
                client.askedForKeyframe = false // missed this one: ask again once drained
            } else if drained && !client.askedForKeyframe {
                client.askedForKeyframe = true
                keyframeRequested.store(true, ordering: .releasing)
                requested = true
            }
            if !client.gate.isOpen && client.askedForKeyframe { stillWaiting = true }
        }
        if client.gate.isOpen {
            client.backlog.add(frames: 1, bytes: bytes)
            client.framesSent += 1
            targets.append(client.target)
        }
    }

    /// The frame's wire forms for the clients registered now: the stream's RTP packets while
    /// RTSP viewers play or a kept GOP may serve them later, Annex-B while raw viewers play.
    private func makeForms(of frame: LiveFrame, in s: inout State) -> FanOutFrame {
        // An audio frame travels to the sinks as it is (and is kept with its GOP); RTSP viewers
        // get the audio track's packets, made once.
        guard frame.format != nil else {
            var rtp: RTPFramePackets?
            if s.rtp?.hasAudio == true && (s.rtpClients > 0 || s.kept != nil) {
                do {
                    rtp = try s.rtp?.packetizeAudio(frame, allocator: Self.allocator)
                } catch {
                    logger.warning("an audio frame the RTP packetizer refused was not sent to RTSP viewers: \(error)")
                }
            }
            return FanOutFrame(frame: frame, rtp: rtp, annexB: nil)
        }
        var rtp: RTPFramePackets?
        if s.rtp != nil && (s.rtpClients > 0 || s.kept != nil) {
            do {
                rtp = try s.rtp?.packetize(frame, allocator: Self.allocator)
            } catch {
                logger.warning("a frame the RTP packetizer refused was not sent to RTSP viewers: \(error)")
            }
        }
        var annexB = frame.annexB
        if annexB == nil && s.annexBClients > 0 {
            annexB = try? frame.annexBBytes(allocator: Self.allocator)
        }
        return FanOutFrame(frame: frame, rtp: rtp, annexB: annexB)
    }

    /// One turn on each event loop writes to all of its clients, each client's frames (held
    /// audio, then the picture) in one write and one flush: a write (and its completion
    /// callback) from off the loop would each be a task of its own, two cross-thread hops per
    /// client and frame (100 viewers: 6,000 a second at 30 fps).
    private func write(_ writes: [HeldWrite]) {
        var loops: [(loop: any EventLoop, targets: [(target: FanOutTarget, frames: [FanOutFrame])])] = []
        // A client's place in `loops` (by its backlog, one per client), when several frames go out.
        var places: [ObjectIdentifier: (loop: Int, target: Int)] = [:]
        for (frame, targets) in writes {
            for target in targets {
                let key = ObjectIdentifier(target.backlog)
                if writes.count > 1, let place = places[key] {
                    loops[place.loop].targets[place.target].frames.append(frame)
                    continue
                }
                let loop = target.channel.eventLoop
                let index = loops.firstIndex(where: { $0.loop === loop }) ?? {
                    loops.append((loop, []))
                    return loops.count - 1
                }()
                loops[index].targets.append((target, [frame]))
                if writes.count > 1 { places[key] = (index, loops[index].targets.count - 1) }
            }
        }
        for (loop, targets) in loops {
            if loop.inEventLoop {
                for (target, frames) in targets { send(frames, to: target) }
            } else {
                loop.execute {
                    for (target, frames) in targets { self.send(frames, to: target) }
                }
            }
        }
    }

    /// The allocator of the shared forms (their storage is shared by every viewer's write).
    static let allocator = ByteBufferAllocator()

    // MARK: - The stream's RTP side

    /// Makes the stream's RTP packets from now on, at most `maximumTransmissionUnit` bytes each
    /// (the first mount's; later calls keep it); returns the stream's SSRC.
    @discardableResult
    func enableRTP(maximumTransmissionUnit: Int) -> UInt32 {
        state.withLock { s in
            if s.rtp == nil { s.rtp = StreamPacketizer(maximumTransmissionUnit: maximumTransmissionUnit) }
            return s.rtp?.ssrc ?? 0
        }
    }

    /// Makes the stream's audio track packets from now on, as `media` describes them (after
    /// ``enableRTP(maximumTransmissionUnit:)``); returns the audio track's SSRC.
    @discardableResult
    func enableAudioRTP(_ media: AudioMediaDescription) -> UInt32 {
        state.withLock { s in s.rtp?.enableAudio(media) ?? 0 }
    }

    /// The audio track's SSRC and RTP timestamp for `now` (mapping the same wall clock as
    /// ``rtpClock(at:)``'s); nil without audio.
    func audioRTPClock(at now: ContinuousClock.Instant) -> (ssrc: UInt32, timestamp: UInt32)? {
        state.withLock { s in s.rtp?.audioRTPClock(at: now) }
    }

    /// The stream's SSRC and the RTP timestamp for `now` (a sender report's); nil before
    /// ``enableRTP(maximumTransmissionUnit:)``.
    func rtpClock(at now: ContinuousClock.Instant) -> (ssrc: UInt32, timestamp: UInt32)? {
        state.withLock { s in s.rtp.map { ($0.ssrc, $0.rtpTimestamp(at: now)) } }
    }
}
