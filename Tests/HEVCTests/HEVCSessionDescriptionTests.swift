import Foundation
import Testing
import H264
import HEVC
import H264TestSupport
import RTP

/// The H.265 SDP (RFC 7798 section 7): FFmpeg's, ours written and read back, DONL and the
/// tolerated and refused values.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCSessionDescriptionTests {
    /// What `ffmpeg -f hevc -i slices4_vui_hrd_aud.265 -c copy -f rtp -sdp_file` writes (its fmtp
    /// separates parameters with "; ").
    static let ffmpegSDP = """
        v=0\r
        o=- 0 0 IN IP4 127.0.0.1\r
        s=No Name\r
        c=IN IP4 127.0.0.1\r
        t=0 0\r
        a=tool:libavformat LIBAVFORMAT_VERSION\r
        m=video 5990 RTP/AVP 96\r
        a=rtpmap:96 H265/90000\r
        a=fmtp:96 sprop-vps=QAEMAf//AWAAAAMAkAAAAwAAAwA8lZgJ; sprop-sps=QgEBAWAAAAMAkAAAAwAAAwA8oAsIBIWWVmkkyvDm4CAgNIIAAAMAAgAAAwA8wCks3AAST4ACSfE=; sprop-pps=RAHBcrRCQA==\r

        """

    @Test func readsFFmpegs() throws {
        let description = try SessionDescription(parsingHEVC: Self.ffmpegSDP)
        #expect(description.encodingName == "H265" && description.port == 5990 && description.address == "127.0.0.1")
        #expect(description.parameterSets.map { ($0[0] >> 1) & 0x3F } == [32, 33, 34])
        #expect(description.warnings.isEmpty && description.maximumDONDifference == 0)
        let (cache, errors) = description.hevcParameterSets()
        #expect(errors.isEmpty)
        #expect(cache.sequenceParameterSets[0]?.displayWidth != nil)
        // The stream's own parameter sets, byte for byte.
        let bytes = try TestFixtures.data("hevc/slices4_vui_hrd_aud.265")
        let inBand = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }.filter { (32...34).contains(($0[0] >> 1) & 0x3F) }
        #expect(Set(description.parameterSets) == Set(inBand))
        // An H.264 reader does not take it.
        #expect(throws: MediaError.self) { try SessionDescription(parsing: Self.ffmpegSDP) }
        // A reader of either codec does.
        #expect(try SessionDescription(parsing: Self.ffmpegSDP, encodingNames: ["H264", "H265"]).encodingName == "H265")
    }

    @Test func writtenAndReadBack() throws {
        let sets = try SessionDescription(parsingHEVC: Self.ffmpegSDP).parameterSets
        let written = SessionDescription(hevcParameterSets: sets, address: "127.0.0.1", port: 5004, payloadType: 97, maximumDONDifference: 3)
        #expect(written.text.contains("a=rtpmap:97 H265/90000\r\n"))
        #expect(written.text.contains("a=fmtp:97 sprop-vps=QAEMAf//AWAAAAMAkAAAAwAAAwA8lZgJ;sprop-sps="))
        #expect(written.text.contains(";sprop-max-don-diff=3\r\n"))
        let back = try SessionDescription(parsingHEVC: written.text)
        #expect(back.parameterSets == sets && back.maximumDONDifference == 3 && back.payloadType == 97)
        // Without parameter sets there is no fmtp line.
        #expect(!SessionDescription(hevcParameterSets: [], address: "127.0.0.1", port: 5004).text.contains("a=fmtp"))
    }

    @Test func toleratedAndRefused() throws {
        let badEntry = Self.ffmpegSDP.replacingOccurrences(of: "sprop-pps=RAHBcrRCQA==", with: "sprop-pps=RAHBcrRCQA==,QAEMAf//AWAAAAMAkAAAAwAAAwA8lZgJ")
        let tolerated = try SessionDescription(parsingHEVC: badEntry)
        #expect(tolerated.warnings.map(\.field) == ["sprop-pps"], "a VPS given as a PPS is skipped with a warning")
        #expect(tolerated.parameterSets.count == 3)
        for value in ["-1", "32768", "x"] {
            let text = Self.ffmpegSDP.replacingOccurrences(of: "sprop-pps=RAHBcrRCQA==", with: "sprop-pps=RAHBcrRCQA==; sprop-max-don-diff=\(value)")
            #expect { try SessionDescription(parsingHEVC: text) } throws: { ($0 as? MediaError)?.field == "sprop-max-don-diff" }
        }
        let withDON = Self.ffmpegSDP.replacingOccurrences(of: "sprop-pps=RAHBcrRCQA==", with: "sprop-pps=RAHBcrRCQA==;sprop-max-don-diff=2")
        #expect(try SessionDescription(parsingHEVC: withDON).maximumDONDifference == 2)
    }
}
