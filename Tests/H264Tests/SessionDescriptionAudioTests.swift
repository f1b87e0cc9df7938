import AudioCodecs
import H264TestSupport
import MediaCore
import RTP
import Testing

/// The `m=audio` section of an SDP: read from what FFmpeg and cameras write, written back, and
/// the video section's reading unchanged by it.
@Suite struct SessionDescriptionAudioTests {
    /// FFmpeg 5.1.9's `-f rtp -sdp_file` for AAC (Fixtures/audio/README.md): `MPEG4-GENERIC`, a
    /// space before `config`, a 5-byte config with the SBR sync extension.
    @Test func readsFFmpegsMPEG4GenericSection() throws {
        let text = String(decoding: try TestFixtures.data("audio/sine-48k-stereo.mpeg4-generic.sdp"), as: UTF8.self)
        let audio = try #require(SessionDescription.audioMedia(parsing: text))
        #expect(audio.payloadType == 97 && audio.encodingName == "MPEG4-GENERIC" && audio.clockRate == 48_000 && audio.channelCount == 2)
        #expect(audio.formatParameters == ["profile-level-id": "1", "mode": "AAC-hbr", "sizelength": "13", "indexlength": "3",
                                           "indexdeltalength": "3", "config": "119056E500"])
        #expect(audio.payloadFormat == .mpeg4Generic(sizeLength: 13, indexLength: 3, indexDeltaLength: 3))
        #expect(audio.format == AudioFormatDescription(codec: .aac, sampleRate: 48_000, channelCount: 2,
                                                       magicCookie: [0x11, 0x90, 0x56, 0xE5, 0x00], samplesPerFrame: 1024))
        #expect(audio.warnings == [] && audio.control == nil)
    }

    /// FFmpeg's `-rtpflags latm`: `MP4A-LATM/48000/2`, `cpresent=0`, the StreamMuxConfig in hex.
    @Test func readsFFmpegsLATMSection() throws {
        let text = String(decoding: try TestFixtures.data("audio/sine-48k-stereo.latm.sdp"), as: UTF8.self)
        let audio = try #require(SessionDescription.audioMedia(parsing: text))
        guard case .latm(false, let config?) = audio.payloadFormat else { Issue.record("\(audio.payloadFormat)"); return }
        #expect(config.audioSpecificConfig.bytes == [0x11, 0x90] && config.frameLengthType == 0 && config.numSubFrames == 0)
        #expect(audio.format == AudioRTP.aacFormat)
    }

    /// RFC 3551 static payload types 0 and 8 need no rtpmap; PCMA with one; Opus's channels are
    /// the rtpmap's; an unknown codec's section is skipped for the next.
    @Test func readsG711AndOpus() throws {
        let pcmu = try #require(SessionDescription.audioMedia(parsing: "m=audio 0 RTP/AVP 0\r\na=control:track0\r\n"))
        #expect(pcmu.encodingName == "PCMU" && pcmu.format == .g711(.pcmu) && pcmu.payloadFormat == .g711 && pcmu.control == "track0")
        let pcma = try #require(SessionDescription.audioMedia(parsing: "m=audio 0 RTP/AVP 8\r\n"))
        #expect(pcma.format == AudioFormatDescription(codec: .pcma, sampleRate: 8000, channelCount: 1))
        let opus = try #require(SessionDescription.audioMedia(parsing:
            "m=audio 0 RTP/AVP 97\r\na=rtpmap:97 G726-32/8000\r\nm=audio 0 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=fmtp:111 sprop-stereo=1\r\n"))
        #expect(opus.payloadType == 111 && opus.format == .opus(channelCount: 2) && opus.formatParameters == ["sprop-stereo": "1"])
        #expect(SessionDescription.audioMedia(parsing: "m=audio 0 RTP/AVP 97\r\na=rtpmap:97 G726-32/8000\r\n") == nil)
    }

    /// A description with audio writes it after the video section, and reads back the same; the
    /// video fields are those of the description without audio.
    @Test(arguments: [AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 97, control: "trackID=1"),
                      AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 97, latm: true),
                      AudioMediaDescription(format: .g711(.pcmu), payloadType: 0),
                      AudioMediaDescription(format: .opus(), payloadType: 111, control: "audio")])
    func writesTheAudioSectionAfterTheVideoAndReadsItBack(audio: AudioMediaDescription) throws {
        var sdp = SessionDescription(address: "127.0.0.1", port: 5004, parameterSets: [])
        sdp.control = "trackID=0"
        let videoOnly = try SessionDescription(parsing: sdp.text)
        sdp.audio = audio
        let text = sdp.text
        #expect(text.hasSuffix(audio.sdpLines.map { $0 + "\r\n" }.joined()))
        var back = try SessionDescription(parsing: text)
        #expect(back == sdp)
        back.audio = nil
        #expect(back == videoOnly)
    }

    /// What `init(format:payloadType:control:latm:)` writes, line by line.
    @Test func writesTheLinesRFC3640AndRFC6416Name() {
        #expect(AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 97, control: "a").sdpLines == [
            "m=audio 0 RTP/AVP 97", "a=rtpmap:97 mpeg4-generic/48000/2",
            "a=fmtp:97 streamtype=5;profile-level-id=1;mode=AAC-hbr;sizelength=13;indexlength=3;indexdeltalength=3;config=1190",
            "a=control:a",
        ])
        // FFmpeg writes the same StreamMuxConfig (Fixtures/audio/sine-48k-stereo.latm.sdp).
        #expect(AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 97, latm: true).sdpLines == [
            "m=audio 0 RTP/AVP 97", "a=rtpmap:97 MP4A-LATM/48000/2",
            "a=fmtp:97 profile-level-id=30;object=2;cpresent=0;config=400023203fc0",
        ])
        #expect(AudioMediaDescription(format: .g711(.pcma), payloadType: 8).sdpLines == ["m=audio 0 RTP/AVP 8", "a=rtpmap:8 PCMA/8000"])
        #expect(AudioMediaDescription(format: .opus(), payloadType: 111).sdpLines == ["m=audio 0 RTP/AVP 111", "a=rtpmap:111 opus/48000/2"])
    }
}
