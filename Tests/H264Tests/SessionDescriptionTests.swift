import H264
import H264TestSupport
import Testing
import RTP

@Suite("SDP session description", .ownThread)
struct SessionDescriptionTests {
    @Test func buildsWhatRFC6184Describes() throws {
        let (sps, pps, _, format) = try RTPPacketizerTests.parameterSets()
        let sdp = SessionDescription(formatDescription: format, address: "127.0.0.1", port: 5004)
        let lines = sdp.text.split(separator: "\r\n").map(String.init)
        #expect(lines.contains("m=video 5004 RTP/AVP 96"))
        #expect(lines.contains("c=IN IP4 127.0.0.1"))
        #expect(lines.contains("a=rtpmap:96 H264/90000"))
        let hex = [sps[1], sps[2], sps[3]].map { String($0, radix: 16, uppercase: true) }
            .map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        #expect(lines.contains("a=fmtp:96 packetization-mode=1;profile-level-id=\(hex);sprop-parameter-sets=\(Base64.encode(sps)),\(Base64.encode(pps))"))
        #expect(sdp.text.hasSuffix("\r\n"))
        // And back.
        let parsed = try SessionDescription(parsing: sdp.text)
        #expect(parsed == sdp)
        #expect(try parsed.formatDescription() == format)
    }

    /// FFmpeg 5.1.9's SDP for `-f rtp` of an x264 stream, verbatim but for LF line ends
    /// (`ffmpeg -i Fixtures/cars_320x240_30f.y4m -frames:v 5 -c:v libx264 -flags +global_header
    /// -f rtp -sdp_file ff.sdp rtp://127.0.0.1:5999`).
    @Test func parsesFFmpegsSDP() throws {
        let text = """
        v=0
        o=- 0 0 IN IP4 127.0.0.1
        s=No Name
        c=IN IP4 127.0.0.1
        t=0 0
        a=tool:libavformat LIBAVFORMAT_VERSION
        m=video 5999 RTP/AVP 96
        a=rtpmap:96 H264/90000
        a=fmtp:96 packetization-mode=1; sprop-parameter-sets=Z2QADazZQUH6KUAAAAMAQAAADwPFCmWA,aOvjyyLA; profile-level-id=64000D

        """
        let sdp = try SessionDescription(parsing: text)
        #expect(sdp.port == 5999 && sdp.payloadType == 96 && sdp.address == "127.0.0.1" && sdp.sessionName == "No Name")
        #expect(sdp.packetizationMode == 1)
        #expect(sdp.profileLevelId == [0x64, 0x00, 0x0D])
        #expect(sdp.parameterSets.map { $0[0] & 0x1F } == [7, 8])
        let format = try sdp.formatDescription()
        #expect(format.dimensions.width == 320 && format.dimensions.height == 240)
        #expect(format.configurationRecord.avcProfileIndication == 100)
    }

    /// `a=control:` of the video media (what an RTSP client names in SETUP); a session-level
    /// or audio one is not it; the text writes it back.
    @Test func readsTheVideoControlURL() throws {
        let text = "v=0\r\ns=x\r\na=control:*\r\nm=audio 0 RTP/AVP 0\r\na=control:track0\r\n"
            + "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=control: track1 \r\n"
        let sdp = try SessionDescription(parsing: text)
        #expect(sdp.control == "track1" && sdp.sessionControl == "*")
        #expect(try SessionDescription(parsing: sdp.text) == sdp)
        #expect(try SessionDescription(parsing: "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n").control == nil)
    }

    @Test func picksTheH264PayloadTypeAndMediaLevelAddress() throws {
        let text = "v=0\r\ns=x\r\nc=IN IP4 10.0.0.1\r\nm=audio 4000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n" +
            "m=video 6000/2 RTP/AVP 97 98\r\nc=IN IP4 239.1.1.1/127\r\na=rtpmap:97 VP8/90000\r\na=rtpmap:98 h264/90000\r\n" +
            "a=fmtp:97 packetization-mode=0\r\n"
        let sdp = try SessionDescription(parsing: text)
        #expect(sdp.payloadType == 98 && sdp.port == 6000 && sdp.address == "239.1.1.1")
        #expect(sdp.packetizationMode == 0, "absent means 0 (RFC 6184)")
        #expect(sdp.profileLevelId == nil && sdp.parameterSets.isEmpty)
    }

    @Test(arguments: [[UInt8](), [0], [1, 2], [1, 2, 3], [0xFF, 0xFE, 0xFD, 0xFC], Array(0...255)])
    func base64RoundTrips(bytes: [UInt8]) throws {
        #expect(try Base64.decode(Base64.encode(bytes)) == bytes)
        // Without padding too.
        #expect(try Base64.decode(Base64.encode(bytes).filter { $0 != "=" }) == bytes)
    }

    @Test func base64KnownVectors() throws {
        // RFC 4648 clause 10.
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(try Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    static let malformed: [MalformedCase] = [
        MalformedCase("no m=video", .invalidSessionDescription, field: "m=video") {
            _ = try SessionDescription(parsing: "v=0\r\nm=audio 4000 RTP/AVP 0\r\n")
        },
        MalformedCase("video without an H264 rtpmap", .invalidSessionDescription, field: "m=video") {
            _ = try SessionDescription(parsing: "v=0\r\nm=video 4000 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\n")
        },
        MalformedCase("port out of range", .invalidSessionDescription, field: "m=") {
            _ = try SessionDescription(parsing: "m=video 70000 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n")
        },
        MalformedCase("clock rate not a number", .invalidSessionDescription, field: "a=rtpmap") {
            _ = try SessionDescription(parsing: "m=video 4000 RTP/AVP 96\r\na=rtpmap:96 H264/fast\r\n")
        },
        MalformedCase("packetization-mode 3", .invalidSessionDescription, field: "packetization-mode") {
            _ = try SessionDescription(parsing: "m=video 4000 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=3\r\n")
        },
        MalformedCase("base64 with a dangling character", .valueOutOfRange, field: "base64") { _ = try Base64.decode("Zm9vY") },
        MalformedCase("base64 data after padding", .valueOutOfRange, field: "base64") { _ = try Base64.decode("Zg==Zg") },
        MalformedCase("sprop without a PPS", .missingParameterSet, field: "pictureParameterSets") {
            _ = try SessionDescription(parsing: "m=video 4000 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 sprop-parameter-sets=Z0IACpZUBQHsgA==\r\n")
                .formatDescription()
        },
    ]

    @Test(arguments: malformed) func malformedDescription(_ malformed: MalformedCase) {
        malformed.expectRejected()
    }
}

extension SessionDescriptionTests {
    /// Found by the `sdp` fuzz target: a description without a connection address wrote an
    /// empty `c=` line, which it then refused to parse.
    @Test func aDescriptionWithoutAddressSurvivesItsText() throws {
        let sdp = SessionDescription(sessionName: "", address: "", port: 5999)
        #expect(!sdp.text.contains("c="))
        #expect(try SessionDescription(parsing: sdp.text) == sdp)
    }
}
