import H264
import H264Streaming
import H264TestSupport
import Testing
import RTP

/// The depacketizer an SDP makes takes its `sprop-parameter-sets` when they parse and starts
/// without them when they do not, as FFmpeg does: such a camera's stream is still read with
/// its in-band parameter sets.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct SessionDescriptionDepacketizerTests {
    @Test func parameterSetsThatDoNotParseAreLeftOut() throws {
        // An SPS header (0x67) over bytes that are no SPS (seq_parameter_set_id far out of range), and a PPS.
        let broken = try SessionDescription(parsing: "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"
            + "a=fmtp:96 packetization-mode=1;sprop-parameter-sets=Z/////8=,aM48gA==\r\n")
        #expect(broken.parameterSets.count == 2)
        let depacketizer = try broken.depacketizer()
        #expect(depacketizer.parameterSets.sequenceParameterSetBytes(id: 0) == nil && depacketizer.parameterSets.pictureParameterSetBytes(id: 0) == nil)

        let good = try SessionDescription(parsing: "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"
            + "a=fmtp:96 packetization-mode=1;sprop-parameter-sets=Z0IAH5WoPASaEAAAcIAAFfkIQA==,aM48gA==\r\n")
        #expect(try good.depacketizer().parameterSets.sequenceParameterSetBytes(id: 0) != nil)
    }
}
