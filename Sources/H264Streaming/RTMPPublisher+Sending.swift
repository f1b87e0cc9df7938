public import H264
public import HEVC
import NIOCore
public import MediaContainers
public import RTMPMessages

extension RTMPPublisher {
    /// Sends one access unit, in decoding order; the first frames before an IDR are dropped, as
    /// is everything up to the next IDR when the connection cannot keep up.
    ///
    /// - Parameters:
    ///   - avcc: the access unit's NAL units, each after a 4-byte length (an `EncodedFrame`'s data).
    ///   - format: its format: a new sequence header goes out when it differs from the last one.
    ///   - isKeyframe: true for an IDR access unit.
    ///   - decodeTime: its decoding time (the message timestamp, in ms since the first frame's).
    ///   - presentationTime: its presentation time on the same clock (PTS − DTS is the
    ///     composition time, negative values kept).
    /// - Returns: true when it was sent, false when it was dropped.
    /// - Throws: ``RTMPError``: the connection's failure (``RTMPError/Code/connectionClosed``,
    ///   ``RTMPError/Code/rejected``, ``RTMPError/Code/protocolViolation``), or
    ///   ``RTMPError/Code/invalidUse`` after ``finish()`` or for a composition time outside SI24.
    @discardableResult
    public func send(avcc: [UInt8], format: FormatDescription, isKeyframe: Bool, decodeTime: Duration,
                     presentationTime: Duration) async throws -> Bool {
        try await send(sample: avcc, format: .h264(format), isKeyframe: isKeyframe, decodeTime: decodeTime,
                       presentationTime: presentationTime)
    }

    /// Sends one access unit of either codec, in decoding order, as
    /// ``send(avcc:format:isKeyframe:decodeTime:presentationTime:)`` does: H.265 in Enhanced RTMP
    /// `hvc1` tags (the hvcC as the sequence header, `onMetaData` `videocodecid` the FourCC).
    ///
    /// - Parameters:
    ///   - sample: the access unit's NAL units, each after a 4-byte length (AVCC or HVCC).
    ///   - format: its format, an avcC or an hvcC: a new sequence header goes out when it differs
    ///     from the last one.
    ///   - isKeyframe: true for a random access point (H.264 IDR, H.265 IRAP).
    ///   - decodeTime: its decoding time.
    ///   - presentationTime: its presentation time on the same clock.
    /// - Returns: true when it was sent, false when it was dropped.
    /// - Throws: as ``send(avcc:format:isKeyframe:decodeTime:presentationTime:)``.
    @discardableResult
    public func send(sample: [UInt8], format: VideoFormatDescription, isKeyframe: Bool, decodeTime: Duration,
                     presentationTime: Duration) async throws -> Bool {
        // Already on the connection's loop (a task that prefers an `EventLoopExecutor` on it), and
        // no offered frame waiting there to go first: written at once, without a turn of the loop
        // and a suspension per frame.
        if loop.inEventLoop && state.withLock({ $0.offered == 0 }) {
            return try deliver(avcc: sample, format: format, isKeyframe: isKeyframe, decodeTime: decodeTime,
                               presentationTime: presentationTime)
        }
        return try await loop.submit { [self] in
            try deliver(avcc: sample, format: format, isKeyframe: isKeyframe, decodeTime: decodeTime, presentationTime: presentationTime)
        }.get()
    }

    /// Hands a ``LiveFrame`` to the connection without waiting — for an encoder's output
    /// callback, which must not block — as ``send(_:)`` sends it. At most
    /// ``maximumOfferedFrames`` frames wait for the event loop; a frame beyond them is dropped as
    /// if the connection could not keep up (up to the next IDR). Failures are not thrown: see
    /// ``failure`` and ``statistics``.
    ///
    /// - Parameter frame: the frame.
    public func offer(_ frame: LiveFrame) {
        guard let format = frame.format else {
            // An audio frame RTMP carries (AAC, G.711 at 8 kHz); others (Opus) are passed over.
            guard let audio = frame.audioFormat, Self.carries(audio), let time = frame.presentationTime else { return }
            loop.execute { [self] in
                do { try deliver(audio: frame.avcc, format: audio, timestamp: time) } catch { logger.warning("\(error)") }
            }
            return
        }
        let presentation = frame.presentationTime ?? arrivalTime(), decode = frame.decodeTime ?? presentation
        let admitted = state.withLock { state in
            guard !state.finished else { return false }
            guard state.offered < Self.maximumOfferedFrames else {
                _ = try? state.timeline.messages(avcc: [], format: format, isKeyframe: frame.isKeyframe,
                                                 decodeTime: decode, presentationTime: presentation, writable: false)
                return false
            }
            state.offered += 1
            return true
        }
        guard admitted else { return }
        loop.execute { [self] in
            defer { state.withLock { $0.offered -= 1 } }
            do {
                _ = try deliver(avcc: frame.avcc, format: format, isKeyframe: frame.isKeyframe, decodeTime: decode,
                                presentationTime: presentation)
            } catch let error as RTMPError where error.code == .invalidUse {
                logger.warning("\(error)")
            } catch {
                // The connection's failure: kept by the handler (``failure``).
            }
        }
    }

    /// The frames ``offer(_:)`` lets wait for the event loop at once.
    public static var maximumOfferedFrames: Int { 4 }

    /// Why the connection failed (the server closed it, refused the publish, broke RTMP); nil
    /// while it is up.
    public var failure: RTMPError? {
        get async {
            try? await loop.submit { [state] in state.withLock { $0.link }.handler.value.failure }.get()
        }
    }

    /// Writes one access unit's messages (and `onMetaData` before the first), on the event loop.
    /// While the connection is down and a reconnection policy allows, the frame is dropped and a
    /// reconnection started (``reconnectIfAllowed(after:)``).
    private func deliver(avcc: [UInt8], format: VideoFormatDescription, isKeyframe: Bool, decodeTime: Duration,
                         presentationTime: Duration) throws -> Bool {
        let url = self.url
        let (link, handler, writable) = try sendingLink()
        let (messages, metadata) = try state.withLock { state throws(RTMPError) -> ([RTMPMessage], RTMPMessage?) in
            do throws(MediaError) {
                let messages = try state.timeline.messages(avcc: avcc, format: format, isKeyframe: isKeyframe, decodeTime: decodeTime,
                                                           presentationTime: presentationTime, writable: writable)
                guard !messages.isEmpty, !state.metadataSent else { return (messages, nil) }
                state.metadataSent = true
                return (messages, RTMPCommand.setDataFrame(self.metadata ?? Self.metadata(of: format), messageStreamId: link.messageStreamId))
            } catch {
                throw RTMPError(.invalidUse, "\(url): \(error)", underlying: error)
            }
        }
        if let metadata { handler.write([metadata], chunkStreamId: RTMPClientHandler.ChunkStream.streamCommand) }
        handler.write(messages, chunkStreamId: RTMPClientHandler.ChunkStream.video)
        return !messages.isEmpty
    }

    /// Sends a ``LiveFrame``: its ``LiveFrame/decodeTime`` as the decoding time (else its
    /// presentation time), its ``LiveFrame/presentationTime`` (else the time since the first
    /// frame came). An audio frame goes as ``send(audio:format:timestamp:)`` sends it when RTMP
    /// carries its codec (AAC; G.711 at 8 kHz) and is passed over otherwise (Opus: convert it
    /// to AAC first, with `AudioConverter` of `H264Decoder`).
    ///
    /// - Parameter frame: the frame.
    /// - Returns: true when it was sent, false when it was dropped.
    /// - Throws: as ``send(avcc:format:isKeyframe:decodeTime:presentationTime:)``.
    @discardableResult
    public func send(_ frame: LiveFrame) async throws -> Bool {
        guard let format = frame.format else {
            // An audio frame RTMP carries (AAC, G.711 at 8 kHz); others (Opus) are passed over.
            guard let audio = frame.audioFormat, Self.carries(audio) else { return false }
            try await send(audio: frame.avcc, format: audio, timestamp: frame.presentationTime ?? arrivalTime())
            return true
        }
        let presentation = frame.presentationTime ?? arrivalTime()
        return try await send(sample: frame.avcc, format: format, isKeyframe: frame.isKeyframe,
                              decodeTime: frame.decodeTime ?? presentation, presentationTime: presentation)
    }

    /// Ends the publish: the end-of-sequence tag, `FCUnpublish` and `deleteStream`; once those
    /// bytes are written the connection half-closes, and closes when the server has closed its
    /// side (at most 2 s later), so the server reads every byte and sees no reset. Idempotent;
    /// never throws.
    public func finish() async {
        let loop = self.loop, key = url.streamKey
        // On the event loop, after the frames ``offer(_:)`` queued before this call.
        let handler = try? await loop.submit { [state] () -> NIOLoopBound<RTMPClientHandler>? in
            let ending = state.withLock { state -> (Link, RTMPMessage?, Task<Void, Never>?)? in
                guard !state.finished else { return nil }
                state.finished = true
                return (state.link, state.timeline.endOfSequence(), state.reconnecting)
            }
            guard let ending else { return nil }
            let (link, end, reconnecting) = ending
            reconnecting?.cancel()
            let handler = link.handler
            guard handler.value.failure == nil else { return handler }
            if let end { handler.value.write([end], chunkStreamId: RTMPClientHandler.ChunkStream.video) }
            let timeout = Duration.seconds(1)
            _ = handler.value.send(.fcUnpublish(key, transactionId: 5), answered: false, timeout: timeout, on: loop)
            _ = handler.value.send(.deleteStream(link.messageStreamId, transactionId: 6), answered: false, timeout: timeout, on: loop)
            return handler
        }.get()
        guard let handler else { return }
        // Written out, then half-closed: nginx reads the end and closes its side (no reset).
        try? await loop.flatSubmit { handler.value.closeGracefully(timeout: .seconds(2), on: loop) }.get()
        await state.withLock { $0.reconnecting }?.value
        logger.info("\(url): finished (\(statistics.framesSent) frames sent, \(statistics.framesDropped) dropped)")
    }

    /// `published N frames to URL (M dropped, K skips to an IDR, R reconnections)`: what was
    /// sent, in one line (a program's summary).
    public var summary: String {
        let stats = statistics
        return "published \(stats.framesSent) frames to \(url) (\(stats.framesDropped) dropped, \(stats.skipsToKeyframe) skips to an IDR, "
            + "\(stats.reconnects) reconnections)"
    }

    /// The time since the first frame without a presentation time came.
    private func arrivalTime() -> Duration {
        let now = ContinuousClock.now
        return state.withLock { state in
            let first = state.firstArrival ?? now
            state.firstArrival = first
            return now - first
        }
    }

    /// `onMetaData` from a format: its size, its SPS's frame rate and its codec.
    static func metadata(of format: VideoFormatDescription) -> FLVMetadata {
        let (width, height) = format.dimensions
        let frameRate = format.framesPerSecond
        return FLVMetadata(width: width, height: height, frameRate: frameRate, codec: format.codec)
    }
}

extension RTMPPublisher: LiveSink {
    /// Publishes a broadcaster's frames (``Broadcaster/attach(_:limits:)``), each as ``send(_:)``
    /// sends it: a connection that cannot keep up drops to the next IDR (``statistics``), and
    /// the broadcaster's queue before it is bounded as for every sink. Returns when the frames
    /// end; does not ``finish()`` the publish.
    ///
    /// - Parameter frames: the stream's frames from a keyframe on.
    /// - Throws: the connection's failure (``RTMPError``) when no reconnection policy covers it.
    public func consume(_ frames: LiveFrameStream) async throws {
        for await frame in frames {
            guard let live = LiveFrame(frame) else { continue }
            try await send(live)
        }
    }
}

extension RTMPPublisher {
    /// On the event loop, what a frame of either medium goes out on: the link, its handler, and
    /// whether it takes writes now (false while the connection is down or cannot keep up).
    /// Throws after ``finish()``, and the connection's failure when no reconnection policy
    /// covers it (one that does is started: ``reconnectIfAllowed(after:)``).
    func sendingLink() throws -> (link: Link, handler: RTMPClientHandler, writable: Bool) {
        let (link, finished) = state.withLock { ($0.link, $0.finished) }
        if finished { throw RTMPError(.invalidUse, "\(url): send after finish") }
        let handler = link.handler.value
        if let failure = handler.failure, !reconnectIfAllowed(after: failure) { throw failure }
        return (link, handler, handler.failure == nil && handler.isWritable)
    }
}
