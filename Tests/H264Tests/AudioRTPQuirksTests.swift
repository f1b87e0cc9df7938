import AudioCodecs
import MediaCore
import RTP
import Testing

/// What real cameras and servers send that the RFCs do not allow, each read as the named
/// public project reads it: a diagnostic or a warning, never a trap.
@Suite struct AudioRTPQuirksTests {
    /// bluenviron/gortsplib#114: an `mpeg4-generic` fmtp with `sizelength` and no `indexlength`
    /// (nor `indexdeltalength`): the AU headers are 13 bits, index 0 bits.
    @Test func sizeLengthWithoutIndexLengthMeansIndexLength0() throws {
        let audio = try #require(SessionDescription.audioMedia(parsing: """
            m=audio 0 RTP/AVP 97\r\na=rtpmap:97 MPEG4-GENERIC/16000/1\r\n\
            a=fmtp:97 streamtype=5; profile-level-id=15; mode=AAC-hbr; config=1408; sizelength=13\r\n
            """))
        #expect(audio.payloadFormat == .mpeg4Generic(sizeLength: 13, indexLength: 0, indexDeltaLength: 0))
        #expect(audio.warnings.map(\.field) == ["indexlength"])
        // AU-headers-length 13 bits: AU-size 3, then 3 padding bits.
        let events = AudioRTP.depacketize([AudioRTP.packet([0x00, 0x0D, 0x00, 0x18, 9, 8, 7], sequenceNumber: 0, timestamp: 0,
                                                           payloadType: 97)], media: audio)
        #expect(events.data == [[9, 8, 7]] && events.diagnostics == [])
    }

    /// Hikvision (bluenviron/gortsplib#658, bluenviron/mediacommon#144): the audio `fmtp` names
    /// another payload type than the `rtpmap`; being the section's only fmtp, it is used.
    @Test func anFmtpOfAnotherPayloadTypeIsUsedWhenItIsTheOnlyOne() throws {
        let audio = try #require(SessionDescription.audioMedia(parsing: """
            v=0\r\nm=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n\
            m=audio 0 RTP/AVP 104\r\na=rtpmap:104 mpeg4-generic/16000/1\r\n\
            a=fmtp:96 profile-level-id=15; streamtype=5; mode=AAC-hbr; config=1408;SizeLength=13; IndexLength=3; IndexDeltaLength=3; Profile=1;\r\n\
            a=control:trackID=2\r\n
            """))
        #expect(audio.payloadType == 104 && audio.control == "trackID=2")
        #expect(audio.payloadFormat == .mpeg4Generic(sizeLength: 13, indexLength: 3, indexDeltaLength: 3))
        #expect(audio.format == AudioFormatDescription(codec: .aac, sampleRate: 16_000, channelCount: 1, magicCookie: [0x14, 0x08],
                                                       samplesPerFrame: 1024))
        #expect(audio.warnings.map(\.field) == ["a=fmtp"])
    }

    /// bluenviron/gortsplib#542: access units of 0 bytes among others: skipped with a warning,
    /// the others read at their places.
    @Test func zeroLengthAccessUnitsAreSkippedWithAWarning() {
        let media = AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96)
        // Three AU headers: sizes 0, 2, 0.
        let payload: [UInt8] = [0x00, 0x30, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 5, 6]
        let events = AudioRTP.depacketize([AudioRTP.packet(payload, sequenceNumber: 0, timestamp: 0)], media: media)
        #expect(events.data == [[5, 6]] && events.timestamps == [1024])
        #expect(events.diagnostics.map(\.code) == [.valueOutOfRange, .valueOutOfRange])
        #expect(events.diagnostics.allSatisfy { $0.field == "AU-size" })
    }

    /// AlexxIT/go2rtc PR #2513: an AU-headers-length saying more than the packet holds: a
    /// diagnostic, the packet skipped, the next one read.
    @Test func auHeadersLongerThanThePacketSkipThePacket() {
        let media = AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 96)
        let events = AudioRTP.depacketize([
            AudioRTP.packet([0xFF, 0xF0, 0x00, 0x10, 1], sequenceNumber: 0, timestamp: 0),
            AudioRTP.packet([0x00], sequenceNumber: 1, timestamp: 1024),
            AudioRTP.packet([0x00, 0x10, 0x00, 0x08, 1], sequenceNumber: 2, timestamp: 2048),
        ], media: media)
        #expect(events.diagnostics.map(\.code) == [.lengthPastEnd, .truncated])
        #expect(events.diagnostics.map(\.field) == ["AU-headers-length", "AU-headers-length"])
        #expect(events.data == [[1]])
    }

    /// bluenviron/mediamtx#3590: `MP4A-LATM` with `cpresent=0` and no `config`: the SDP reads with
    /// a warning and a format without a configuration; every packet is a diagnostic, no frame.
    @Test(arguments: ["cpresent=0", "cpresent=0;config="])
    func latmWithoutAnyConfigIsADiagnostic(fmtp: String) throws {
        let audio = try #require(SessionDescription.audioMedia(parsing:
            "m=audio 0 RTP/AVP 96\r\na=rtpmap:96 MP4A-LATM/44100/2\r\na=fmtp:96 profile-level-id=1;\(fmtp)\r\n"))
        #expect(audio.payloadFormat == .latm(muxConfigPresent: false, streamMuxConfig: nil))
        #expect(audio.format == AudioFormatDescription(codec: .aac, sampleRate: 44_100, channelCount: 2))
        #expect(audio.warnings.map(\.field) == ["config"])
        let events = AudioRTP.depacketize([AudioRTP.packet([0x02, 1, 2], sequenceNumber: 0, timestamp: 0),
                                           AudioRTP.packet([0x02, 1, 2], sequenceNumber: 1, timestamp: 1024)], media: audio)
        #expect(events.frames.isEmpty)
        #expect(events.diagnostics.map(\.code) == [.invalidConfigurationRecord, .invalidConfigurationRecord])
    }
}
