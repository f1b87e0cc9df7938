public import AudioCodecs

/// How an audio track's frames are carried in RTP payloads: what an
/// ``AudioRTPDepacketizer`` reads and an ``AudioRTPPacketizer`` writes.
public enum AudioRTPPayloadFormat: Hashable, Sendable {
    /// RFC 3640 `mpeg4-generic` in mode `AAC-hbr` (or `AAC-lbr`): an AU-headers section (its
    /// length in bits in the first 16 bits), each AU header an `AU-size` of `sizeLength` bits and
    /// an `AU-Index` (first) or `AU-Index-delta` (the rest), then the access units.
    case mpeg4Generic(sizeLength: Int, indexLength: Int, indexDeltaLength: Int)
    /// RFC 6416 `MP4A-LATM`: each packet (or run of packets up to the marker) one
    /// `AudioMuxElement`; `muxConfigPresent` is the SDP's `cpresent` (1 when absent, RFC 6416
    /// section 7.1), `streamMuxConfig` its `config` (nil when absent or unreadable).
    case latm(muxConfigPresent: Bool, streamMuxConfig: StreamMuxConfig?)
    /// RFC 3551 `PCMU` / `PCMA`: the payload is the samples, one byte each.
    case g711
    /// RFC 7587 `opus`: the payload is one Opus packet.
    case opus
}
