public import H264
public import RTP

extension SessionDescription {
    /// A depacketizer for the H.264 stream this SDP describes: its payload type, and its
    /// `sprop-parameter-sets` as the parameter sets known before the first packet. The one rule
    /// every receiver here follows (an SDP file, an RTSP DESCRIBE, an RTSP ANNOUNCE).
    ///
    /// - Parameter reorderWindow: how many later packets may wait for a missing one before it
    ///   counts as lost.
    /// Parameter sets in the SDP that do not parse (a camera's broken `sprop-parameter-sets`,
    /// retina#42, VStarcam) are left out, as FFmpeg leaves them: the stream's in-band ones are used.
    ///
    /// - Throws: `MediaError` `unsupported` for packetization-mode 2 (interleaved).
    public func depacketizer(reorderWindow: Int = 16) throws(MediaError) -> RTPDepacketizer {
        guard packetizationMode != 2 else {
            throw MediaError(.unsupported, field: "packetization-mode", "packetization-mode 2 (interleaved) is not supported")
        }
        var parameterSets = ParameterSetCache()
        if let format = try? formatDescription(), let cache = try? ParameterSetCache(configurationRecord: format.configurationRecord) {
            parameterSets = cache
        }
        return RTPDepacketizer(configuration: .init(reorderWindow: reorderWindow, payloadType: payloadType),
                               parameterSets: parameterSets)
    }
}
