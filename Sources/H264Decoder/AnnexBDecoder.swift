public import H264

/// Decodes an Annex-B byte stream that arrives in chunks of any size (socket reads, pipe reads,
/// MPEG-TS payloads): bytes in, decoded frames out of its ``DecoderSession``, with the timing
/// carried through.
///
/// ```swift
/// let session = try DecoderSession { frame in show(frame) }
/// var decoder = AnnexBDecoder(session: session)
/// for (chunk, time) in network { try decoder.append(chunk, presentationTimeStamp: time) }
/// try decoder.finish()
/// ```
///
/// Built on `AccessUnitReceiver`: decoding starts at the first IDR whose parameter sets have
/// arrived, each access unit goes to the session with its `FormatDescription`, and what the
/// receiver skipped is counted here. A time stamp given with a chunk belongs to the first access
/// unit that begins in that chunk (as a PES or RTP time stamp belongs to the picture that starts
/// in its packet); an access unit without one goes to the session untimed with a duration of
/// ``frameDuration``, and its frame is stamped at output, the previous frame's time plus that
/// duration — in presentation order, so B-frame streams come out evenly spaced too.
public struct AnnexBDecoder: Sendable {
    /// The session the access units go to.
    public let session: DecoderSession
    /// The time between frames, for access units that arrive without a time stamp: set from the
    /// first SPS's frame rate (VUI timing) unless given, 1/25 s without either.
    public private(set) var frameDuration: Duration?
    private var receiver = AccessUnitReceiver()
    /// Time stamps given with chunks, by the stream offset of the chunk's first byte.
    private var marks: [(offset: Int, time: Duration)] = []
    /// How many access units were handed to the session.
    public private(set) var accessUnitCount = 0
    /// How many access units the receiver dropped before a usable IDR (joining mid-stream,
    /// missing parameter sets).
    public private(set) var skippedAccessUnitCount = 0

    /// Creates an adaptor feeding `session`.
    ///
    /// - Parameters:
    ///   - session: the decoder session.
    ///   - frameDuration: the time between untimed access units; nil to take it from the SPS.
    public init(session: DecoderSession, frameDuration: Duration? = nil) {
        self.session = session
        self.frameDuration = frameDuration
    }

    /// Adds bytes and decodes every access unit they complete.
    ///
    /// - Parameters:
    ///   - chunk: the next bytes of the stream.
    ///   - presentationTimeStamp: the time of the first access unit that begins in `chunk`.
    /// - Throws: the errors of `DecoderSession.decode(_:presentationTimeStamp:duration:)`.
    public mutating func append(_ chunk: some Collection<UInt8>, presentationTimeStamp: Duration? = nil) throws(H264Error) {
        if let presentationTimeStamp { marks.append((receiver.streamLength, presentationTimeStamp)) }
        receiver.append(chunk)
        while let event = receiver.next() { try handle(event) }
    }

    /// Adds bytes in place (a read buffer) and decodes every access unit they complete.
    ///
    /// - Throws: the errors of `DecoderSession.decode(_:presentationTimeStamp:duration:)`.
    public mutating func append(contentsOf chunk: UnsafeRawBufferPointer, presentationTimeStamp: Duration? = nil) throws(H264Error) {
        if let presentationTimeStamp { marks.append((receiver.streamLength, presentationTimeStamp)) }
        receiver.append(contentsOf: chunk)
        while let event = receiver.next() { try handle(event) }
    }

    /// Ends the stream: decodes the last access unit and outputs every delayed frame
    /// (`DecoderSession.waitForAsynchronousFrames()`).
    ///
    /// - Throws: the errors of `DecoderSession.decode(_:presentationTimeStamp:duration:)` and
    ///   `DecoderSession.waitForAsynchronousFrames()`.
    public mutating func finish() throws(H264Error) {
        for event in receiver.finish() { try handle(event) }
        try session.waitForAsynchronousFrames()
    }

    private mutating func handle(_ event: AccessUnitReceiver.Event) throws(H264Error) {
        switch event {
        case .accessUnit(let unit):
            if frameDuration == nil {
                let rate = FrameRate.framesPerSecond(signalledBy: unit.formatDescription?.sequenceParameterSet)
                frameDuration = rate > 0 && rate < 1000 ? .seconds(1 / rate) : .milliseconds(40)
            }
            let duration = frameDuration ?? .milliseconds(40)
            // The latest mark at or before the access unit's start, if not used yet.
            var time: Duration?
            var used = 0
            for (i, mark) in marks.enumerated() where mark.offset <= unit.streamOffset {
                time = mark.time
                used = i + 1
            }
            marks.removeFirst(used)
            accessUnitCount += 1
            try session.decode(unit, presentationTimeStamp: time, duration: duration)
        case .skipped(let skip):
            skippedAccessUnitCount += skip.accessUnitCount
        case .missingParameterSets:
            break
        }
    }
}
