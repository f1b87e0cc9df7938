public import MediaCore

extension AudioFormatDescription {
    /// The format of a G.711 track (ITU-T G.711; RTP payload types 0 `PCMU` and 8 `PCMA`, RFC
    /// 3551 section 4.5.14): 8000 samples per second, one byte per sample, mono unless the
    /// `rtpmap` says otherwise; no configuration bytes.
    ///
    /// - Parameters:
    ///   - codec: `.pcmu` (µ-law) or `.pcma` (A-law).
    ///   - sampleRate: samples per second (8000; the `rtpmap`'s rate when it gives another).
    ///   - channelCount: the number of channels (1).
    public static func g711(_ codec: AudioCodec, sampleRate: Int = 8000, channelCount: Int = 1) -> AudioFormatDescription {
        AudioFormatDescription(codec: codec, sampleRate: sampleRate, channelCount: channelCount)
    }

    /// The format of an Opus track (RFC 7587): its RTP clock is 48000 whatever the rate it was
    /// coded at, and the channel count is the `rtpmap`'s (`opus/48000/2`: RFC 7587 section 7
    /// fixes 2 there, `sprop-stereo` says whether the sender sends stereo); no `OpusHead`.
    ///
    /// - Parameter channelCount: the number of channels (2, as the `rtpmap` writes it).
    public static func opus(channelCount: Int = 2) -> AudioFormatDescription {
        AudioFormatDescription(codec: .opus, sampleRate: 48_000, channelCount: channelCount)
    }
}
