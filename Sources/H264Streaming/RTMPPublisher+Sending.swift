public import H264

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
        try await channel.eventLoop.submit { [self] in
            try deliver(avcc: avcc, format: format, isKeyframe: isKeyframe, decodeTime: decodeTime, presentationTime: presentationTime)
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
        let format: FormatDescription
        do { format = try frame.h264Format(publishingTo: url) } catch { return logger.warning("\(error)") }
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
        channel.eventLoop.execute { [self] in
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
        get async { try? await channel.eventLoop.submit { [handler] in handler.value.failure }.get() }
    }

    /// Writes one access unit's messages (and `onMetaData` before the first), on the event loop.
    private func deliver(avcc: [UInt8], format: FormatDescription, isKeyframe: Bool, decodeTime: Duration,
                         presentationTime: Duration) throws -> Bool {
        let url = self.url
        if state.withLock({ $0.finished }) { throw RTMPError(.invalidUse, "\(url): send after finish") }
        if let failure = handler.value.failure { throw failure }
        let writable = handler.value.isWritable
        let (messages, metadata) = try state.withLock { state throws(RTMPError) -> ([RTMPMessage], RTMPMessage?) in
            do throws(H264Error) {
                let messages = try state.timeline.messages(avcc: avcc, format: format, isKeyframe: isKeyframe, decodeTime: decodeTime,
                                                           presentationTime: presentationTime, writable: writable)
                guard !messages.isEmpty, !state.metadataSent else { return (messages, nil) }
                state.metadataSent = true
                return (messages, RTMPCommand.setDataFrame(self.metadata ?? Self.metadata(of: format), messageStreamId: messageStreamId))
            } catch {
                throw RTMPError(.invalidUse, "\(url): \(error)", underlying: error)
            }
        }
        if let metadata { handler.value.write([metadata], chunkStreamId: RTMPClientHandler.ChunkStream.streamCommand) }
        handler.value.write(messages, chunkStreamId: RTMPClientHandler.ChunkStream.video)
        return !messages.isEmpty
    }

    /// Sends a ``LiveFrame``: its ``LiveFrame/decodeTime`` as the decoding time (else its
    /// presentation time), its ``LiveFrame/presentationTime`` (else the time since the first
    /// frame came).
    ///
    /// - Parameter frame: the frame.
    /// - Returns: true when it was sent, false when it was dropped.
    /// - Throws: as ``send(avcc:format:isKeyframe:decodeTime:presentationTime:)``;
    ///   ``RTMPError/Code/invalidUse`` for an H.265 frame (not published over RTMP yet).
    @discardableResult
    public func send(_ frame: LiveFrame) async throws -> Bool {
        let presentation = frame.presentationTime ?? arrivalTime()
        return try await send(avcc: frame.avcc, format: try frame.h264Format(publishingTo: url), isKeyframe: frame.isKeyframe,
                              decodeTime: frame.decodeTime ?? presentation, presentationTime: presentation)
    }

    /// Ends the publish: the end-of-sequence tag, `FCUnpublish` and `deleteStream`, then the
    /// connection closes (once those bytes are written). Idempotent; never throws.
    public func finish() async {
        let handler = self.handler, streamId = messageStreamId, key = url.streamKey, loop = channel.eventLoop
        // On the event loop, after the frames ``offer(_:)`` queued before this call.
        let first = try? await loop.submit { [state] () -> Bool in
            let end: RTMPMessage?? = state.withLock { state in
                guard !state.finished else { return nil }
                state.finished = true
                return .some(state.timeline.endOfSequence())
            }
            guard let end else { return false }
            guard handler.value.failure == nil else { return true }
            if let end { handler.value.write([end], chunkStreamId: RTMPClientHandler.ChunkStream.video) }
            let timeout = Duration.seconds(1)
            _ = handler.value.send(.fcUnpublish(key, transactionId: 5), answered: false, timeout: timeout, on: loop)
            _ = handler.value.send(.deleteStream(streamId, transactionId: 6), answered: false, timeout: timeout, on: loop)
            return true
        }.get()
        guard first == true else { return }
        // An empty write's promise completes once everything before it is written.
        try? await channel.writeAndFlush(channel.allocator.buffer(capacity: 0)).get()
        try? await channel.close()
        logger.info("\(url): finished (\(statistics.framesSent) frames sent, \(statistics.framesDropped) dropped)")
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

    /// `onMetaData` from a format: its size and its SPS's frame rate.
    static func metadata(of format: FormatDescription) -> FLVMetadata {
        let (width, height) = format.dimensions
        return FLVMetadata(width: width, height: height, frameRate: format.sequenceParameterSet?.frameRate)
    }
}
