import H264
import H264TestSupport
import Testing
import RTP

/// SDPs of real cameras that FFmpeg plays, each read as FFmpeg reads it: what decides how the
/// packets are read is kept, what is broken is skipped with a warning (code, field, offset), and
/// nothing throws. Each case names its public source.
@Suite(.ownThread) struct SessionDescriptionQuirksTests {
    /// The codes and fields of `description`'s warnings.
    static func warned(_ description: SessionDescription) -> [String] {
        description.warnings.map { "\($0.field ?? "")" }
    }

    /// scottlamb/retina#68 (a "macro-video rtsp server" camera): `profile-level-id` in base64,
    /// no `o=` line, `a=control:*` at session level.
    @Test func profileLevelIdInBase64() throws {
        let sdp = try SessionDescription(parsing: """
            v=0\r\ns=streamed by the macro-video rtsp server\r\nt=0 0\r\na=control:*\r\na=range:npt=0-\r\n\
            c=IN IP4 0.0.0.0\r\nm=video 0 RTP/AVP 96\r\nb=AS:500\r\na=rtpmap:96 H264/90000\r\n\
            a=fmtp:96 profile-level-id=TQAf;packetization-mode=1;sprop-parameter-sets=J00AH+dAKALdgKUFBQXwAAADABAAAAMCiwEAAtxoAAIlUX//AoA=,KO48gA==\r\n\
            a=control:track1\r\n
            """)
        #expect(sdp.profileLevelId == [0x4D, 0x00, 0x1F])
        #expect(sdp.packetizationMode == 1 && sdp.parameterSets.count == 2 && sdp.control == "track1" && sdp.sessionControl == "*")
        #expect(Self.warned(sdp) == ["profile-level-id"])
        #expect(sdp.warnings.allSatisfy { $0.code == .invalidSessionDescription && $0.byteOffset != nil })
    }

    /// scottlamb/retina#42 and #43 (VStarcam): `sprop-parameter-sets` whose NAL headers are not
    /// parameter sets (`e9`: the forbidden bit; `00`). Both are skipped; the depacketizer
    /// starts without them and takes the in-band ones.
    @Test func spropParameterSetsThatAreNotParameterSets() throws {
        let sdp = try SessionDescription(parsing: "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"
            + "a=fmtp:96 packetization-mode=1;profile-level-id=00f004;sprop-parameter-sets=6QDwBE/LCAAAH0gAB1TgIAAAAAA=,AAAAAA==\r\n")
        #expect(sdp.parameterSets.isEmpty)
        #expect(Self.warned(sdp) == ["sprop-parameter-sets", "sprop-parameter-sets"])
        #expect(sdp.profileLevelId == [0x00, 0xF0, 0x04])
    }

    /// FFmpeg pull request #181 (Hikvision): a trailing comma and no PPS. The SPS is kept, the
    /// empty entry warned about; without a PPS there is no format yet (in-band sets complete it).
    @Test func spropWithoutAPPS() throws {
        let sdp = try SessionDescription(parsing: "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"
            + "a=fmtp:96 packetization-mode=1;sprop-parameter-sets=Z0IAH5WoPASaEAAAcIAAFfkIQA==,\r\n")
        #expect(sdp.parameterSets.count == 1 && sdp.parameterSets[0][0] & 0x1F == 7)
        #expect(Self.warned(sdp) == ["sprop-parameter-sets"])
        #expect(throws: MediaError.self) { try sdp.formatDescription() }
    }

    /// AlexxIT/go2rtc#1663 and scottlamb/retina#33 (GeoVision): spaces after the `fmtp`
    /// semicolons, a media section without `t=` first, and a `c=IN` line without an address in
    /// a later section (here also at session level: warned about and ignored).
    @Test func spacesAfterSemicolonsAndAConnectionLineWithoutAddress() throws {
        let sdp = try SessionDescription(parsing: "v=0\r\nc=IN\r\nm=video 0 RTP/AVP 105\r\nc=IN IP4 192.168.5.237\r\n"
            + "a=control:rtsp://192.168.5.237/media/video1/video\r\na=rtpmap:105 H264/90000\r\n"
            + "a=fmtp:105 profile-level-id=640032; packetization-mode=1; sprop-parameter-sets=Z2QAMqw7UBQAWtCAAAH0AABhqEI=,aOqPLA==\r\n"
            + "a=recvonly\r\nm=application 0 RTP/AVP 107\r\nc=IN\r\na=rtpmap:107 vnd.onvif.metadata/90000\r\n")
        #expect(sdp.payloadType == 105 && sdp.packetizationMode == 1 && sdp.parameterSets.count == 2)
        #expect(sdp.profileLevelId == [0x64, 0x00, 0x32] && sdp.address == "192.168.5.237")
        #expect(sdp.control == "rtsp://192.168.5.237/media/video1/video" && sdp.sessionControl == nil)
        #expect(Self.warned(sdp) == ["c="])
        #expect(try sdp.formatDescription().sequenceParameterSets.count == 1)
    }

    /// bluenviron/gortsplib's SDP test "h264 with space at end": `a=rtpmap:96 H264/90000 `.
    @Test func aSpaceAfterTheClockRate() throws {
        let sdp = try SessionDescription(parsing: "v=0\r\no=- 4158123474391860926 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
            + "m=video 42504 RTP/AVP 96\r\na=rtpmap:96 H264/90000 \r\na=fmtp:96 packetization-mode=1\r\n")
        #expect(sdp.clockRate == 90_000 && sdp.packetizationMode == 1 && sdp.warnings.isEmpty)
    }

    /// bluenviron/mediamtx#231 (an `o=` line with a negative session id) and AlexxIT/go2rtc#679
    /// (an SDP of only `m=`, `a=rtpmap` and `a=control`): neither matters to the stream.
    @Test func missingOrMalformedSessionLines() throws {
        let malformedOrigin = try SessionDescription(parsing: "v=0\r\no=-2208991488 2208991488 IN IP4 10.255.1.119\r\ns=Unnamed\r\n"
            + "c=IN IP4 10.255.1.54\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\nb=RR:0\r\na=rtpmap:96 H264/90000\r\n"
            + "a=fmtp:96 packetization-mode=1;profile-level-id=64001f\r\n")
        #expect(malformedOrigin.port == 5004 && malformedOrigin.address == "10.255.1.54" && malformedOrigin.warnings.isEmpty)
        let bare = try SessionDescription(parsing: "m=video 0 RTP/AVP 96\na=rtpmap:96 H264/90000\na=control:trackID=0\n")
        #expect(bare.control == "trackID=0" && bare.packetizationMode == 0 && bare.parameterSets.isEmpty)
        #expect(throws: MediaError.self) { try bare.formatDescription() }
    }

    /// scottlamb/retina#110: the `fmtp` names another payload type than the `rtpmap`; it is
    /// the only one, so it is used, with a warning. An empty `a=fmtp:96` is no parameters.
    @Test func anFmtpForAnotherPayloadTypeAndAnEmptyOne() throws {
        let other = try SessionDescription(parsing: "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"
            + "a=fmtp:97 packetization-mode=1;sprop-parameter-sets=Z0IAH5WoPASaEAAAcIAAFfkIQA==,aM48gA==\r\n")
        #expect(other.packetizationMode == 1 && other.parameterSets.count == 2)
        #expect(Self.warned(other) == ["a=fmtp"])
        let empty = try SessionDescription(parsing: "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96\r\n")
        #expect(empty.packetizationMode == 0 && empty.warnings.isEmpty)
    }

    /// A `profile-level-id` neither hex nor base64 of three bytes is left out with a warning.
    @Test func anUnreadableProfileLevelId() throws {
        let sdp = try SessionDescription(parsing: "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 profile-level-id=42E01\r\n")
        #expect(sdp.profileLevelId == nil && Self.warned(sdp) == ["profile-level-id"])
    }

    /// The session-level `a=control:` (the aggregate URL) is the one before the first `m=`; a
    /// control of another media section before the video one is neither.
    @Test func sessionAndMediaLevelControls() throws {
        let sdp = try SessionDescription(parsing: "v=0\r\na=control:rtsp://cam/agg\r\nm=audio 0 RTP/AVP 0\r\na=control:audio\r\n"
            + "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=control:*\r\n")
        #expect(sdp.sessionControl == "rtsp://cam/agg" && sdp.control == "*")
    }
}
