public import H264
public import HEVC

/// Turns the RTP packets of a video stream of either codec into `CompressedFrame`s: H.264 by
/// RFC 6184 (`RTPDepacketizer`), H.265 by RFC 7798 (``HEVCRTPDepacketizer``), chosen by the
/// SDP's `rtpmap` — what an RTSP client, an RTSP record server and an RTP receiver hold, so that
/// none of them forks on the codec. Sans-I/O: append packets, then take the events.
///
/// Each frame is one access unit with a picture: its NAL units as they came (4-byte lengths,
/// in-band parameter sets included), the format its slices refer to (the SDP's `sprop-…`
/// parameter sets, then the in-band ones: H.264's `FormatDescription`, H.265's `hvcC` built
/// again when a VPS, SPS or PPS changes), its keyframe flag (an H.264 IDR, an H.265 IRAP
/// picture) and its RTP timestamp as a time since the first packet (unwrapped across 2³²).
/// ``Event/formatChanged(_:)`` comes before the first frame of each format, the first one
/// included. An access unit without a picture gives its parameter sets to the format and is not
/// a frame; one with a picture before any format is known (no SPS yet) is reported
/// (`missingParameterSet`) and skipped: nobody could decode it.
///
/// ```swift
/// var depacketizer = try VideoRTPDepacketizer(SessionDescription(parsing: sdp, encodingNames: ["H264", "H265"]))
/// depacketizer.append(packet: datagram)
/// while let event = depacketizer.next() {
///     if case .frame(let received) = event { write(received.frame) }
/// }
/// ```
public struct VideoRTPDepacketizer: Sendable {
    /// What the depacketizer found.
    public enum Event: Sendable {
        /// A frame, with its RTP timestamp and whether a marker bit ended it.
        case frame(RTPReceivedFrame)
        /// The frames that follow are in this format (the first format included).
        case formatChanged(VideoFormatDescription)
        /// Packets were lost.
        case loss(RTPDepacketizer.Loss)
        /// A loss hit a picture: a keyframe would repair the stream.
        case keyframeRequest
        /// A damaged packet or NAL unit, or a picture before any format, reported and skipped.
        case diagnostic(MediaError)
    }

    /// One codec's depacketizer, in place: two optionals rather than an enum, so that a packet
    /// is appended without copying the depacketizer out of a payload.
    private var h264: RTPDepacketizer?
    private var hevc: HEVCRTPDepacketizer?
    /// The H.265 stream's `hvcC` as its parameter sets come.
    private var hevcFormat = HEVCFormatTracker()
    /// The format of the last frame handed out; nil before the first.
    public private(set) var format: VideoFormatDescription?
    /// The RTP timestamps as times since the first.
    private var timeline: RTPTimeline
    /// A frame held while its format change goes out first.
    private var pending: RTPReceivedFrame?

    /// The depacketizer `description` asks for (`H264` or `H265` in its `rtpmap`), with its
    /// `sprop-…` parameter sets known before the first packet (ones that do not parse are left
    /// out, as FFmpeg leaves them: the in-band ones are used; retina#42).
    ///
    /// - Parameters:
    ///   - description: the stream's SDP.
    ///   - reorderWindow: how many later packets may wait for a missing one before it counts as
    ///     lost.
    /// - Throws: `MediaError` `unsupported` for H.264 packetization-mode 2 (interleaved).
    public init(_ description: SessionDescription, reorderWindow: Int = 16) throws(MediaError) {
        timeline = RTPTimeline(clockRate: description.clockRate > 0 ? description.clockRate : 90_000)
        guard description.codec == .hevc else {
            h264 = try description.depacketizer(reorderWindow: reorderWindow)
            return
        }
        let parameterSets = description.hevcParameterSets().cache
        hevc = HEVCRTPDepacketizer(configuration: .init(reorderWindow: reorderWindow, payloadType: description.payloadType),
                                   parameterSets: parameterSets, maximumDONDifference: description.maximumDONDifference)
        hevcFormat = HEVCFormatTracker(configuration: try? HEVCDecoderConfigurationRecord(parameterSets: parameterSets.nalUnits))
    }

    /// A depacketizer over an H.264 one already configured.
    ///
    /// - Parameter depacketizer: the RFC 6184 depacketizer.
    public init(h264 depacketizer: RTPDepacketizer) {
        h264 = depacketizer
        timeline = RTPTimeline()
    }

    /// The stream's codec.
    public var codec: VideoCodec { hevc != nil ? .hevc : .h264 }
    /// How many packets were appended.
    public var packetCount: Int { h264?.packetCount ?? hevc?.packetCount ?? 0 }
    /// How many packets were lost.
    public var lostPacketCount: Int { h264?.lostPacketCount ?? hevc?.lostPacketCount ?? 0 }
    /// How many access units were dropped (incomplete, too large).
    public var droppedAccessUnitCount: Int { h264?.droppedAccessUnitCount ?? hevc?.droppedAccessUnitCount ?? 0 }

    /// Takes one RTP packet (header and payload).
    ///
    /// - Parameter packet: the packet's bytes, read during the call only.
    public mutating func append(packet: UnsafeRawBufferPointer) {
        if h264 != nil { h264!.append(packet: packet) } else { hevc?.append(packet: packet) }
    }

    /// Takes one RTP packet (header and payload).
    ///
    /// - Parameter packet: the packet's bytes.
    public mutating func append(packet: [UInt8]) {
        packet.withUnsafeBytes { append(packet: $0) }
    }

    /// Marks the end of the stream: the access unit under way is completed.
    public mutating func finish() {
        h264?.finish()
        hevc?.finish()
    }

    /// The next event; nil when the packets appended so far give no more.
    public mutating func next() -> Event? {
        if let held = pending {
            pending = nil
            return .frame(held)
        }
        while true {
            // The codec's event: an access unit becomes a frame (nil: none, go on), the rest passes.
            if h264 != nil {
                switch Self.split(h264!.next()) {
                case nil: return nil
                case .event(let event)?: return event
                case .accessUnit(let received)?: if let event = frame(of: received) { return event }
                }
            } else {
                switch Self.split(hevc?.next()) {
                case nil: return nil
                case .event(let event)?: return event
                case .accessUnit(let received)?: if let event = frame(of: received) { return event }
                }
            }
        }
    }

    /// A codec depacketizer's event: its access unit, or the event it is here.
    private enum Split<Unit: Sendable> {
        case accessUnit(RTPReceivedAccessUnit<Unit>)
        case event(Event)
    }

    /// Splits a codec depacketizer's event into an access unit or this depacketizer's event.
    private static func split<Unit>(_ event: RTPDepacketizerEvent<Unit>?) -> Split<Unit>? {
        switch event {
        case nil: nil
        case .accessUnit(let received)?: .accessUnit(received)
        case .loss(let loss)?: .event(.loss(loss))
        case .keyframeRequest?: .event(.keyframeRequest)
        case .diagnostic(let error)?: .event(.diagnostic(error))
        }
    }

    /// An H.264 access unit's event: its frame (after its format change), or nil.
    private mutating func frame(of received: RTPDepacketizer.ReceivedAccessUnit) -> Event? {
        let unit = received.accessUnit
        let current: VideoFormatDescription?
        if let own = unit.formatDescription {
            current = format?.h264 == own ? format : .h264(own)
        } else {
            current = format
        }
        guard unit.hasPicture else { return nil }
        return frame(unit.data, isKeyframe: unit.isIDR, format: current, of: received)
    }

    /// An H.265 access unit's event: its frame (after its format change), or nil.
    private mutating func frame(of received: HEVCRTPDepacketizer.ReceivedAccessUnit) -> Event? {
        let unit = received.accessUnit
        let record = hevcFormat.take(unit)
        guard unit.hasPicture else { return nil }
        let current: VideoFormatDescription? = if let record {
            format?.hevc == record ? format : .hevc(record)
        } else {
            nil
        }
        return frame(unit.data, isKeyframe: unit.isIRAP, format: current, of: received)
    }

    /// The frame of `data` in `current`: a format change first when it differs from the last
    /// frame's; a diagnostic without a format.
    private mutating func frame<Unit>(_ data: [UInt8], isKeyframe: Bool, format current: VideoFormatDescription?,
                                      of received: RTPReceivedAccessUnit<Unit>) -> Event {
        let time = timeline.time(of: received.timestamp)
        guard let current else {
            return .diagnostic(MediaError(.missingParameterSet, field: "sps",
                                          "a picture before any parameter sets (RTP timestamp \(received.timestamp)), skipped"))
        }
        let frame = RTPReceivedFrame(accessUnit: CompressedFrame(data: data, format: current, presentationTime: time,
                                                                 isKeyframe: isKeyframe),
                                     timestamp: received.timestamp, endedByMarker: received.endedByMarker,
                                     wallClock: received.wallClock)
        guard current == format else {
            format = current
            pending = frame
            return .formatChanged(current)
        }
        return .frame(frame)
    }
}

/// A frame with its RTP timestamp, as ``VideoRTPDepacketizer`` and the RTSP client hand them out.
public typealias RTPReceivedFrame = RTPReceivedAccessUnit<CompressedFrame>

extension RTPReceivedAccessUnit where Unit == CompressedFrame {
    /// The frame (``accessUnit``, by the name of what it is).
    public var frame: CompressedFrame {
        get { accessUnit }
        set { accessUnit = newValue }
    }
}
