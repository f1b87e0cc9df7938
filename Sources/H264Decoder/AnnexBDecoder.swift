public import H264
import HEVC

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
/// The codec is the session's when its configuration or format description names it, else
/// told from the stream's first NAL unit headers (`AnnexB.codec(ofStreamBeginning:isComplete:nalUnitLimit:)`,
/// as FFmpeg's probe tells it): the first bytes wait until they tell. H.264 is read by
/// `AccessUnitReceiver`: decoding starts at the first IDR whose parameter sets have arrived,
/// each access unit goes to the session with its `FormatDescription`, and what the receiver
/// skipped is counted here. H.265 is cut by `HEVCAccessUnitAssembler` and starts at the first
/// IRAP picture whose SPS has arrived. A time stamp given with a chunk belongs to the first access
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
    /// The H.265 reader, once the stream is known to be H.265.
    private var hevc: HEVCStreamReceiver?
    /// The first bytes, held until they tell the codec; nil once it is known.
    private var undecided: [UInt8]? = []
    /// Time stamps given with chunks, by the stream offset of the chunk's first byte.
    private var marks: [(offset: Int, time: Duration)] = []
    /// How many access units were handed to the session.
    public private(set) var accessUnitCount = 0
    /// How many access units the receiver dropped before a usable IDR (joining mid-stream,
    /// missing parameter sets).
    public var skippedAccessUnitCount: Int { h264SkippedAccessUnitCount + (hevc?.skippedAccessUnitCount ?? 0) }
    private var h264SkippedAccessUnitCount = 0

    /// The codec of the stream: the session's when it names one, else told from the stream's
    /// first bytes; nil until they tell.
    public var codec: VideoCodec? {
        undecided == nil ? (hevc == nil ? .h264 : .hevc) : nil
    }

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
    public mutating func append(_ chunk: some Collection<UInt8>, presentationTimeStamp: Duration? = nil) throws(MediaError) {
        if let presentationTimeStamp { marks.append((streamLength, presentationTimeStamp)) }
        try take(chunk)
    }

    /// Adds bytes in place (a read buffer) and decodes every access unit they complete.
    ///
    /// - Throws: the errors of `DecoderSession.decode(_:presentationTimeStamp:duration:)`.
    public mutating func append(contentsOf chunk: UnsafeRawBufferPointer, presentationTimeStamp: Duration? = nil) throws(MediaError) {
        if let presentationTimeStamp { marks.append((streamLength, presentationTimeStamp)) }
        try take(chunk)
    }

    /// Holds `chunk` while the codec is not known, else reads it.
    private mutating func take(_ chunk: some Collection<UInt8>) throws(MediaError) {
        guard undecided == nil else {
            undecided!.append(contentsOf: chunk)
            try decide(isComplete: false)
            return
        }
        try read(chunk)
    }

    /// The bytes received so far.
    private var streamLength: Int { undecided?.count ?? hevc?.streamLength ?? receiver.streamLength }

    /// Hands `chunk` to the reader of the stream's codec and decodes what it completes.
    private mutating func read(_ chunk: some Collection<UInt8>) throws(MediaError) {
        if hevc != nil {
            hevc!.append(chunk)
            while let unit = hevc!.next() { try decode(unit) }
        } else {
            receiver.append(chunk)
            while let event = receiver.next() { try handle(event) }
        }
    }

    /// Chooses the reader once the session or the held bytes tell the codec, and reads them.
    private mutating func decide(isComplete: Bool) throws(MediaError) {
        guard let held = undecided else { return }
        guard let codec = session.codec ?? AnnexB.codec(ofStreamBeginning: held, isComplete: isComplete) else { return }
        undecided = nil
        if codec == .hevc { hevc = HEVCStreamReceiver() }
        try read(held)
    }

    /// Ends the stream: decodes the last access unit and outputs every delayed frame
    /// (`DecoderSession.waitForAsynchronousFrames()`).
    ///
    /// - Throws: the errors of `DecoderSession.decode(_:presentationTimeStamp:duration:)` and
    ///   `DecoderSession.waitForAsynchronousFrames()`.
    public mutating func finish() throws(MediaError) {
        try decide(isComplete: true)
        if hevc != nil {
            for unit in hevc!.finish() { try decode(unit) }
        }
        for event in receiver.finish() { try handle(event) }
        try session.waitForAsynchronousFrames()
    }

    private mutating func handle(_ event: AccessUnitReceiver.Event) throws(MediaError) {
        switch event {
        case .accessUnit(let unit):
            let (time, duration) = timing(streamOffset: unit.streamOffset,
                                          framesPerSecond: FrameRate.framesPerSecond(signalledBy: unit.formatDescription?.sequenceParameterSet))
            try session.decode(unit, presentationTimeStamp: time, duration: duration)
        case .skipped(let skip):
            h264SkippedAccessUnitCount += skip.accessUnitCount
        case .missingParameterSets:
            break
        }
    }

    private mutating func decode(_ unit: HEVCAccessUnit) throws(MediaError) {
        let (time, duration) = timing(streamOffset: unit.streamOffset, framesPerSecond: hevc?.signalledFrameRate?.framesPerSecond ?? 0)
        try session.decode(unit, presentationTimeStamp: time, duration: duration)
    }

    /// The time of the access unit beginning at `streamOffset` (the latest mark at or before it,
    /// if not used yet) and its duration (``frameDuration``, set from the first signalled rate);
    /// counts the access unit.
    private mutating func timing(streamOffset: Int, framesPerSecond rate: Double) -> (Duration?, Duration) {
        if frameDuration == nil {
            frameDuration = rate > 0 && rate < 1000 ? .seconds(1 / rate) : .milliseconds(40)
        }
        var time: Duration?
        var used = 0
        for (i, mark) in marks.enumerated() where mark.offset <= streamOffset {
            time = mark.time
            used = i + 1
        }
        marks.removeFirst(used)
        accessUnitCount += 1
        return (time, frameDuration ?? .milliseconds(40))
    }
}
