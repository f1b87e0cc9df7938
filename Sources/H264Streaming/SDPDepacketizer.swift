import H264
import HEVC
import RTP

/// The depacketizer an SDP asks for — an ``RTSPClient``'s stream, or a publisher's ANNOUNCE to a
/// record path — chosen by its `rtpmap`: RFC 6184 for `H264`, RFC 7798 for `H265` (exactly one
/// of the two is set). Both hand out the same events
/// over their own access unit type. Two optionals rather than an enum, so that a packet is
/// appended in place (`h264!.append`), without copying the depacketizer out of a payload.
struct SDPDepacketizer: Sendable {
    var h264: RTPDepacketizer?
    var hevc: HEVCRTPDepacketizer?

    /// The depacketizer `description` asks for, with its `sprop-…` parameter sets known before
    /// the first packet (one that does not parse is left out: the in-band ones are used).
    init(_ description: SessionDescription, reorderWindow: Int) throws(MediaError) {
        guard description.encodingName.uppercased() == "H265" else {
            h264 = try description.depacketizer(reorderWindow: reorderWindow)
            return
        }
        hevc = HEVCRTPDepacketizer(configuration: .init(reorderWindow: reorderWindow, payloadType: description.payloadType),
                                   parameterSets: description.hevcParameterSets().cache,
                                   maximumDONDifference: description.maximumDONDifference)
    }

    /// An H.264 depacketizer.
    init(h264 depacketizer: RTPDepacketizer) {
        h264 = depacketizer
    }

    /// The SDP text parsed as H.264 or H.265, whichever video format comes first.
    static func sessionDescription(parsing text: String) throws(MediaError) -> SessionDescription {
        try SessionDescription(parsing: text, encodingNames: ["H264", "H265"])
    }

    mutating func append(packet: UnsafeRawBufferPointer) {
        if h264 != nil { h264!.append(packet: packet) } else { hevc?.append(packet: packet) }
    }

    mutating func finish() {
        h264?.finish()
        hevc?.finish()
    }

    /// Its counts.
    var statistics: RTPReceptionStatistics {
        if let h264 { return RTPReceptionStatistics(counting: h264) }
        guard let hevc else { return RTPReceptionStatistics(packets: 0, lostPackets: 0, droppedAccessUnits: 0) }
        return RTPReceptionStatistics(packets: hevc.packetCount, lostPackets: hevc.lostPacketCount,
                                      droppedAccessUnits: hevc.droppedAccessUnitCount)
    }
}
