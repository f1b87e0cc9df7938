import AudioCodecs
import H264TestSupport
import MediaCore
import RTP
import Testing

/// RTP packets FFmpeg 5.1.9 sent (Fixtures/audio/README.md): the depacketized access units are
/// the bytes of the same encode's ADTS frames, headers stripped, in order, at timestamps 1024
/// apart — all 48, but for the aggregating `mpeg4-generic` muxer, whose packets carry the first
/// 46 (their AU headers count 46: FFmpeg's rtpenc_aac does not send its last, unfilled packet
/// at the end of the stream).
@Suite struct AudioRTPPeerTests {
    @Test(arguments: ["mpeg4-generic", "mpeg4-generic-fragmented", "latm"])
    func ffmpegsPacketsGiveItsAccessUnits(name: String) throws {
        let text = String(decoding: try TestFixtures.data("audio/sine-48k-stereo.\(name).sdp"), as: UTF8.self)
        let audio = try #require(SessionDescription.audioMedia(parsing: text))
        let packets = try AudioRTP.fixturePackets("sine-48k-stereo.\(name).rtp")
        #expect(packets.count == ["mpeg4-generic": 10, "mpeg4-generic-fragmented": 96, "latm": 48][name])
        let all = try AudioRTP.adtsFrames("sine-48k-stereo.aac")
        #expect(all.count == 48)
        let count = name == "mpeg4-generic" ? 46 : 48
        let expected = Array(all.prefix(count))
        let events = AudioRTP.depacketize(packets, media: audio)
        #expect(events.diagnostics == [] && events.losses == [])
        #expect(events.data == expected)
        let first = try #require(events.timestamps.first)
        let expectedTimestamps: [UInt32] = (0..<count).map { (index: Int) -> UInt32 in first &+ UInt32(index) * 1024 }
        #expect(events.timestamps == expectedTimestamps)
        let last: Duration = Duration.seconds(1) * ((count - 1) * 1024) / 48_000
        #expect(events.frames.last?.accessUnit.presentationTime == last)
    }

    /// Our packetizer's packets of the same access units, at FFmpeg's MTU, give them back too.
    @Test(arguments: [false, true])
    func ourPacketsOfFFmpegsAccessUnitsGiveThemBack(latm: Bool) throws {
        let frames = try AudioRTP.adtsFrames("sine-48k-stereo.aac")
        let media = AudioMediaDescription(format: AudioRTP.aacFormat, payloadType: 97, latm: latm)
        var packetizer = AudioRTPPacketizer(media: media, ssrc: 7, maximumTransmissionUnit: 200)
        var packets: [[UInt8]] = []
        for (index, frame) in frames.enumerated() {
            try packetizer.packetize(frame, rtpTimestamp: UInt32(index) * 1024) { packets.append($0) }
        }
        #expect(AudioRTP.depacketize(packets, media: media).data == frames)
    }
}
