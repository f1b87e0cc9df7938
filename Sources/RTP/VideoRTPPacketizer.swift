public import H264

/// Cuts access units of either codec into RTP packets: H.264 by RFC 6184 (`RTPPacketizer`),
/// H.265 by RFC 7798 (``HEVCRTPPacketizer``), chosen by each frame's `VideoFormatDescription`
/// — what a server that relays whatever its source sends holds per viewer.
///
/// Both codecs share one sequence-number and timestamp machinery (one `RTPPacketizer` inside),
/// so a viewer's packets stay one RTP stream whatever they carry. Before each random access
/// point (an H.264 IDR, an H.265 IRAP picture) that does not carry its own parameter sets, the
/// format's are sent: SPS and PPS, or VPS, SPS and PPS.
///
/// ```swift
/// var packetizer = VideoRTPPacketizer(configuration: .init(maximumTransmissionUnit: 1400))
/// try packetizer.packetize(avcc: frame.avcc, presentationTime: time, format: frame.format) { packet in
///     send(iovecs: [packet.prefix, packet.payload])
/// }
/// ```
public struct VideoRTPPacketizer: Sendable {
    /// How packets are made (the H.264 packetizer's settings, for both codecs).
    public typealias Configuration = RTPPacketizer.Configuration
    /// One packet, as two byte slices valid only during the closure it is given to.
    public typealias Packet = RTPPacketizer.Packet

    /// The RFC 7798 packetizer, which also sends H.264 through the RTP packetizer it holds.
    private var packetizer: HEVCRTPPacketizer

    /// Creates a packetizer.
    public init(configuration: Configuration = Configuration()) {
        packetizer = HEVCRTPPacketizer(configuration: configuration)
    }

    /// The configuration packets are made with.
    public var configuration: Configuration { packetizer.configuration }
    /// The sequence number of the next packet.
    public var nextSequenceNumber: UInt16 { packetizer.nextSequenceNumber }
    /// How many packets were made.
    public var packetCount: Int { packetizer.packetCount }

    /// The 90 kHz RTP timestamp of a presentation time (as `RTPPacketizer` computes it).
    public func timestamp(for presentationTime: Duration) -> UInt32 { packetizer.timestamp(for: presentationTime) }

    /// Packetizes one access unit of `format`'s codec.
    ///
    /// - Parameters:
    ///   - avcc: the access unit's NAL units, each after a 4-byte length.
    ///   - presentationTime: when the picture is shown (gives the 90 kHz timestamp).
    ///   - format: the stream's format: the payload format, and the parameter sets sent before
    ///     a random access point that lacks them.
    ///   - emit: called once per packet, in sending order.
    /// - Throws: as `RTPPacketizer.packetize(avcc:lengthSize:presentationTime:formatDescription:emit:)`
    ///   and ``HEVCRTPPacketizer/packetize(hvcc:lengthSize:presentationTime:parameterSets:emit:)``;
    ///   nothing is emitted when it throws.
    public mutating func packetize(avcc: UnsafeRawBufferPointer, presentationTime: Duration, format: VideoFormatDescription,
                                   emit: (Packet) -> Void) throws(MediaError) {
        if let description = format.h264 {
            try packetizer.packetize(avcc: avcc, presentationTime: presentationTime, formatDescription: description, emit: emit)
        } else {
            try packetizer.packetize(hvcc: avcc, presentationTime: presentationTime, parameterSets: format.parameterSets, emit: emit)
        }
    }

    /// Packetizes one access unit held in an array; see
    /// ``packetize(avcc:presentationTime:format:emit:)-(UnsafeRawBufferPointer,_,_,_)``.
    public mutating func packetize(avcc: [UInt8], presentationTime: Duration, format: VideoFormatDescription,
                                   emit: (Packet) -> Void) throws(MediaError) {
        let result = avcc.withUnsafeBytes { buffer in
            Result { () throws(MediaError) in
                try packetize(avcc: buffer, presentationTime: presentationTime, format: format, emit: emit)
            }
        }
        try result.get()
    }
}

extension SessionDescription {
    /// Describes a stream of either codec: `a=rtpmap:PT H264/90000` with `sprop-parameter-sets`
    /// and `profile-level-id`, or `H265/90000` with `sprop-vps`, `sprop-sps` and `sprop-pps`.
    ///
    /// - Parameters:
    ///   - format: the stream's format.
    ///   - sessionName: `s=`.
    ///   - address: where the RTP packets go (`c=`).
    ///   - port: their UDP port (`m=video`).
    public init(format: VideoFormatDescription, sessionName: String = "h264", address: String, port: Int) {
        if let description = format.h264 {
            self.init(formatDescription: description, sessionName: sessionName, address: address, port: port)
        } else {
            self.init(hevcParameterSets: format.parameterSets, sessionName: sessionName, address: address, port: port)
        }
    }
}
