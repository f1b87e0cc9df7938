import H264
import H264TestSupport
import Testing

/// ``PictureOrderCounter`` (clause 8.2.1) against FFmpeg: pictures sorted by (coded video
/// sequence, `PicOrderCnt`) come out in the order FFmpeg's decoder outputs them, for streams
/// of each `pic_order_cnt_type` (0 with B-frames and B-pyramids, 1, 2).
@Suite(.ownThread, .timeLimit(.minutes(5))) struct PictureOrderCounterTests {
    static let streams = [
        "flv/x264_bframes_320x192_9f.264",     // poc 0, B-pyramid, two IDR periods
        "conformance/CABA3_SVA_B.264",        // poc 0, B-frames
        "conformance/HPCA_BRCM_C.264",        // poc 0, B-frames
        "conformance/CABAST3_Sony_E.jsv",     // poc 0, B-frames, multi-slice
        "conformance/BAMQ1_JVC_C.264",        // poc 1
        "conformance/BAMQ2_JVC_C.264",        // poc 1
        "conformance/BA1_FT_C.264",           // poc 2
    ]

    @Test(arguments: streams)
    func presentationOrderMatchesFFmpeg(stream: String) throws {
        let units = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data(stream)).filter(\.hasPicture)
        var counter = PictureOrderCounter()
        var sequence = -1
        var keys: [(sequence: Int, count: Int, index: Int)] = []
        for (index, unit) in units.enumerated() {
            let format = try #require(unit.formatDescription)
            let cache = try ParameterSetCache(configurationRecord: format.configurationRecord)
            let slice = try #require(unit.nalUnits.first { NALUnitHeader(byte: $0.first!).nalUnitType.isVCL })
            let header = try SliceHeader(nalUnit: slice, parameterSets: cache)
            let sps = try #require(cache.sequenceParameterSets[cache.pictureParameterSets[header.picParameterSetId]!.seqParameterSetId])
            if header.isIDR { sequence += 1 }
            keys.append((sequence, counter.picOrderCnt(of: header, sps: sps), index))
        }
        let ours = keys.sorted { ($0.sequence, $0.count, $0.index) < ($1.sequence, $1.count, $1.index) }.map(\.index)

        let probe = try Subprocess.run("ffprobe", ["-v", "error", "-f", "h264", "-show_entries", "frame=coded_picture_number",
                                                   "-of", "csv=p=0", try TestFixtures.path(stream)])
        #expect(probe.status == 0, "\(probe.stderr)")
        let ffmpeg = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").compactMap { Int($0.prefix { $0 != "," }) }
        #expect(ffmpeg.count == units.count)
        #expect(ours == ffmpeg)
        #expect(stream.contains("BA") || ours != Array(units.indices), "expected reordering in \(stream)")
    }
}
