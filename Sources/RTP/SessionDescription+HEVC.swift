public import H264
public import HEVC

extension SessionDescription {
    /// Creates a description of an H.265 stream (RFC 7798 section 7): `a=rtpmap:PT H265/90000`
    /// and an `fmtp` with `sprop-vps`, `sprop-sps` and `sprop-pps` from `parameterSets`.
    ///
    /// - Parameters:
    ///   - hevcParameterSets: the stream's VPS, SPS and PPS NAL units (others are not written).
    ///   - sessionName: `s=`.
    ///   - address: where the RTP packets go (`c=`).
    ///   - port: their UDP port (`m=video`).
    ///   - payloadType: the RTP payload type.
    ///   - maximumDONDifference: `sprop-max-don-diff` (0, the default, is not written).
    public init(hevcParameterSets: [[UInt8]], sessionName: String = "h265", address: String, port: Int,
                payloadType: UInt8 = 96, maximumDONDifference: Int = 0) {
        self.init(sessionName: sessionName, address: address, port: port, payloadType: payloadType, packetizationMode: 0,
                  parameterSets: hevcParameterSets)
        encodingName = "H265"
        self.maximumDONDifference = maximumDONDifference
    }

    /// Parses an SDP text describing an H.265 stream: the first `m=video` format whose
    /// `rtpmap` names H265.
    ///
    /// - Throws: as `init(parsing:encodingNames:)`.
    public init(parsingHEVC text: String) throws(MediaError) {
        try self.init(parsing: text, encodingNames: ["H265"])
    }

    /// Parses the first video stream of either codec the SDP describes (`H264` or `H265` in its
    /// `rtpmap`): what a ``VideoRTPDepacketizer`` reads.
    ///
    /// - Throws: as `init(parsing:encodingNames:)`.
    public init(parsingVideo text: String) throws(MediaError) {
        try self.init(parsing: text, encodingNames: ["H264", "H265"])
    }

    /// The stream's codec, by its `rtpmap` encoding name: `.hevc` for `H265` (any case), else
    /// `.h264` — the one rule every reader of an SDP follows.
    public var codec: VideoCodec { encodingName.uppercased() == "H265" ? .hevc : .h264 }

    /// The parameter sets of `sprop-vps`, `sprop-sps` and `sprop-pps`, stored in a cache to
    /// give an ``HEVCRTPDepacketizer``; one that does not parse is left out, with its error in
    /// the returned list.
    public func hevcParameterSets() -> (cache: HEVCParameterSetCache, errors: [MediaError]) {
        var cache = HEVCParameterSetCache()
        var errors: [MediaError] = []
        for unit in parameterSets {
            do {
                try cache.store(unit)
            } catch {
                errors.append(error)
            }
        }
        return (cache, errors)
    }
}

extension SessionDescription {
    /// The stream's format, of the codec its `rtpmap` names: an H.265 `hvcC` built from
    /// `sprop-vps`, `sprop-sps` and `sprop-pps`, else the H.264 format of
    /// `sprop-parameter-sets`.
    ///
    /// - Throws: `MediaError`: `missingParameterSet` without an SPS (the parameter sets then come
    ///   in band), and the parameter sets' parse errors.
    public func videoFormat() throws(MediaError) -> VideoFormatDescription {
        if codec == .hevc { return .hevc(try HEVCDecoderConfigurationRecord(parameterSets: parameterSets)) }
        return .h264(try formatDescription())
    }
}
