extension H264Error.Code {
    /// An RTP packet arrived after the depacketizer had given up waiting for it (or twice): it is
    /// dropped (``RTPDepacketizer``).
    public static let latePacket = H264Error.Code(rawValue: "latePacket")
    /// An FU-A fragment arrived without the fragment that starts its NAL unit (the stream began
    /// mid-NAL unit, or the sender is broken): the NAL unit and its access unit are dropped.
    public static let missingFragmentStart = H264Error.Code(rawValue: "missingFragmentStart")
    /// A fragmented NAL unit was interrupted before its end fragment: the part received is
    /// dropped with its access unit.
    public static let incompleteFragment = H264Error.Code(rawValue: "incompleteFragment")
    /// An RTP packet from another synchronization source than the stream's (`SSRC`): the
    /// depacketizer starts over with the new source.
    public static let ssrcChanged = H264Error.Code(rawValue: "ssrcChanged")
    /// An RTP packet whose payload type is not the one configured: dropped.
    public static let unexpectedPayloadType = H264Error.Code(rawValue: "unexpectedPayloadType")
    /// A packet too large for the configured MTU in packetization-mode 0 (single NAL unit): the
    /// encoder must make smaller slices, or the session use packetization-mode 1.
    public static let nalUnitTooLarge = H264Error.Code(rawValue: "nalUnitTooLarge")
    /// An SDP session description lacks what an H.264 stream needs, or says it wrongly.
    public static let invalidSessionDescription = H264Error.Code(rawValue: "invalidSessionDescription")
}
