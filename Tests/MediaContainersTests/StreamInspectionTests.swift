import H264
import MediaContainers
import H264TestSupport
import Testing

/// The model behind `h264 inspect` (its JSON is compared with FFmpeg's reading of 63 streams in
/// H264CLITests' InspectTests).
@Suite(.ownThread, .timeLimit(.minutes(5))) struct StreamInspectionTests {
    /// Fixtures/flv/x264_bframes_320x192_9f.264: 9 pictures, IDR at 0 and 6, one SPS and one PPS
    /// (repeated before the second IDR).
    @Test func countsOfARealStream() throws {
        let bytes = try TestFixtures.data("flv/x264_bframes_320x192_9f.264")
        let inspection = try StreamInspection(bytes: bytes, configurationRecord: nil, lengthSize: nil)
        #expect(inspection.accessUnits.filter(\.hasPicture).count == 9)
        #expect(inspection.accessUnits.filter(\.isIDR).count == 2)
        #expect(inspection.sequenceParameterSets.count == 1 && inspection.pictureParameterSets.count == 1)
        #expect(inspection.diagnostics.isEmpty)
        #expect(inspection.nalUnits.first?.offset == 0)
        let json = inspection.json()
        #expect(json.hasPrefix("{\"access_units\":[{\"offset\":0,"))
        #expect(json.hasSuffix(",\"diagnostics\":[]}"))
        #expect(inspection.table().contains("SPS 0: High, level"))
    }

    /// Control characters in a message are escaped as JSON wants (`\u0001`), quotes and
    /// backslashes too.
    @Test func diagnosticsAreEscaped() throws {
        var inspection = try StreamInspection(bytes: [], configurationRecord: nil, lengthSize: nil)
        inspection.diagnostics = [.init(kind: .warning, error: MediaError(.valueOutOfRange, field: "x", byteOffset: 3, "a\u{1}\"b\\\n"))]
        #expect(inspection.json() == """
        {"access_units":[],"sps":[],"pps":[],"diagnostics":[{"kind":"warning","code":"valueOutOfRange","field":"x","byte_offset":3,"bit_offset":null,"message":"a\\u0001\\"b\\\\\\u000a"}]}
        """)
    }
}
