public import H264
public import RTP

/// Decodes the access units of an RTP stream (RFC 6184) as `RTPDepacketizer` delivers them:
/// received access units in, decoded frames out of its ``DecoderSession``, stamped with their
/// RTP time.
///
/// ```swift
/// let session = try DecoderSession { frame in show(frame) }
/// var decoder = RTPDecoder(session: session)
/// while let event = depacketizer.next() {
///     if case .accessUnit(let received) = event { try decoder.decode(received) }
/// }
/// try decoder.finish()
/// ```
///
/// The twin of ``AnnexBDecoder`` for packets: decoding starts at the first IDR access unit with
/// its parameter sets (in band, in the access unit's `FormatDescription` — which the
/// depacketizer takes from the stream or from the SDP's `sprop-parameter-sets` — or in the
/// session's), and what came before is counted in ``skippedAccessUnitCount``. Each access unit
/// goes to `DecoderSession.decode(_:presentationTimeStamp:duration:)` with its 90 kHz RTP
/// timestamp as the presentation time: extended over the 32-bit wrap and counted from the first
/// decoded access unit's (time zero), so frames of a B-frame stream, which leave the decoder in
/// presentation order, come out with rising times. The duration is the SPS's frame interval
/// (VUI timing, ``frameDuration``), zero without timing information: the frames' presentation
/// times then give their spacing.
public struct RTPDecoder: Sendable {
    /// The RTP clock rate of H.264 video (RFC 6184 section 8.2.1): 90 kHz.
    public static let clockRate = 90_000
    /// The session the access units go to.
    public let session: DecoderSession
    /// The time between frames from the first decoded SPS's VUI timing
    /// (`SequenceParameterSet.frameRate`); nil before it, or when the SPS has none.
    public private(set) var frameDuration: Duration?
    /// How many access units were handed to the session.
    public private(set) var accessUnitCount = 0
    /// How many access units were dropped before the first IDR with its parameter sets
    /// (joining mid-stream).
    public private(set) var skippedAccessUnitCount = 0
    /// The RTP timestamps of the access units handed to the session, from the first (time zero).
    private var timeline = RTPTimeline(clockRate: clockRate)

    /// Creates an adaptor feeding `session`.
    ///
    /// - Parameter session: the decoder session.
    public init(session: DecoderSession) {
        self.session = session
    }

    /// Queues one received access unit for decoding (through
    /// `DecoderSession.decode(_:presentationTimeStamp:duration:)`, VideoToolbox's
    /// `VTDecompressionSessionDecodeFrame`) and returns without waiting for libavcodec; before
    /// the first IDR with its parameter sets, counts it as skipped instead.
    ///
    /// - Parameter received: an access unit from `RTPDepacketizer`, in decoding order.
    /// - Throws: the errors of `DecoderSession.decode(_:presentationTimeStamp:duration:)`.
    public mutating func decode(_ received: RTPDepacketizer.ReceivedAccessUnit) throws(MediaError) {
        let unit = received.accessUnit
        guard let time = presentationTime(of: received.timestamp, nalUnitTypes: unit.nalUnitTypes,
                                          formatDescription: unit.formatDescription) else { return }
        try session.decode(unit, presentationTimeStamp: time, duration: frameDuration ?? .zero)
    }

    /// Queues one received frame of either codec (from `VideoRTPDepacketizer`, an RTSP client or
    /// publisher) for decoding, as ``decode(_:)-(RTPDepacketizer.ReceivedAccessUnit)`` does an
    /// H.264 access unit: before the first keyframe (an H.264 IDR, an H.265 IRAP picture), it
    /// is counted as skipped; its RTP timestamp gives its presentation time, its format's VUI
    /// timing ``frameDuration`` (through `DecoderSession.decode(_:duration:)`).
    ///
    /// An audio frame (its RTP timestamp in another clock) is passed over.
    ///
    /// - Parameter received: a frame with its RTP timestamp, in decoding order.
    /// - Throws: the errors of `DecoderSession.decode(_:duration:)`.
    public mutating func decode(_ received: RTPReceivedFrame) throws(MediaError) {
        guard received.frame.videoFormat != nil else { return }
        var frame = received.frame
        if !timeline.hasStarted {
            // The first frame decoded is a keyframe (the one keyframe rule, `KeyframeGate`).
            var gate = KeyframeGate()
            guard gate.admit(frame) else {
                skippedAccessUnitCount += 1
                return
            }
            if let rate = frame.videoFormat?.framesPerSecond, rate > 0, rate < 1000 { frameDuration = .seconds(1 / rate) }
        }
        accessUnitCount += 1
        frame.presentationTime = timeline.time(of: received.timestamp)
        try session.decode(frame, duration: frameDuration ?? .zero)
    }

    /// Queues one access unit from `RTPZeroCopyDepacketizer` as
    /// ``decode(_:)-(RTPDepacketizer.ReceivedAccessUnit)`` does, its bytes copied once, from the
    /// received packets into libavcodec's input (through
    /// `DecoderSession.decode(_:presentationTimeStamp:duration:)` for an `AccessUnitView`).
    ///
    /// - Parameter received: an access unit from `RTPZeroCopyDepacketizer`, in decoding order.
    /// - Throws: the errors of `DecoderSession.decode(_:presentationTimeStamp:duration:)`.
    public mutating func decode(_ received: RTPZeroCopyDepacketizer.ReceivedAccessUnit) throws(MediaError) {
        let unit = received.accessUnit
        guard let time = presentationTime(of: received.timestamp, nalUnitTypes: unit.nalUnitTypes,
                                          formatDescription: unit.formatDescription) else { return }
        try session.decode(unit, presentationTimeStamp: time, duration: frameDuration ?? .zero)
    }

    /// The presentation time of the access unit with `timestamp`, or nil when it comes before
    /// the first IDR with its parameter sets (then counted as skipped).
    private mutating func presentationTime(of timestamp: UInt32, nalUnitTypes: [NALUnitType],
                                           formatDescription: FormatDescription?) -> Duration? {
        if !timeline.hasStarted {
            let hasParameterSets = formatDescription != nil || session.formatDescription != nil
                || nalUnitTypes.contains(.sequenceParameterSet)
            guard nalUnitTypes.contains(.idrSlice) && hasParameterSets else {
                skippedAccessUnitCount += 1
                return nil
            }
            if let rate = (formatDescription ?? session.formatDescription)?.sequenceParameterSet?.frameRate,
               rate > 0, rate < 1000 {
                frameDuration = .seconds(1 / rate)
            }
        }
        accessUnitCount += 1
        return timeline.time(of: timestamp)
    }

    /// Ends the stream: outputs every delayed frame and waits for them
    /// (`DecoderSession.waitForAsynchronousFrames()`, VideoToolbox's
    /// `VTDecompressionSessionWaitForAsynchronousFrames`). The session stays usable.
    ///
    /// - Throws: the errors of `DecoderSession.waitForAsynchronousFrames()`.
    public mutating func finish() throws(MediaError) {
        try session.waitForAsynchronousFrames()
    }
}
