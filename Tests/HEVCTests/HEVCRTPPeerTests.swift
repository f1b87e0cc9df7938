import Foundation
import H264
import HEVC
import H264TestSupport
import Testing
import RTP

/// RFC 7798 against FFmpeg 5.1 as the peer, on 127.0.0.1: we depacketize what `ffmpeg -f rtp`
/// sends of each shared stream (its SDP read by us) into the file's NAL units, access unit by
/// access unit; FFmpeg reads what our packetizer sends (through our SDP) into the same NAL units.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(3))) struct HEVCRTPPeerTests {
    static func nalUnits(ofAnnexB bytes: [UInt8]) -> [[UInt8]] {
        AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
    }

    static func withoutTrailingZeros(_ unit: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var unit = unit
        while unit.count > 2, unit.last == 0 { unit = unit.dropLast() }
        return unit
    }

    @Test(arguments: TestFixtures.hevcStreams)
    func readsWhatFFmpegSends(stream: String) throws {
        let input = try TestFixtures.path("hevc/\(stream)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hevc-rtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdpPath = directory.appendingPathComponent("ffmpeg.sdp").path
        let socket = try LoopbackUDP()
        let (packets, status) = try socket.receive(fromProgram: ["ffmpeg", "-nostdin", "-v", "error", "-f", "hevc", "-i", input, "-c", "copy",
                                                                 "-f", "rtp", "-sdp_file", sdpPath, "rtp://127.0.0.1:\(socket.port)"])
        #expect(status == 0)

        let description = try SessionDescription(parsingHEVC: String(contentsOfFile: sdpPath, encoding: .utf8))
        #expect(description.encodingName == "H265" && description.warnings.isEmpty)
        let (parameterSets, errors) = description.hevcParameterSets()
        #expect(errors.isEmpty)
        let received = HEVCDepacketized(packets, maximumDONDifference: description.maximumDONDifference, parameterSets: parameterSets)
        #expect(received.diagnostics.isEmpty, "\(received.diagnostics.prefix(3))")
        #expect(received.losses.isEmpty)
        let expected = HEVCAccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("hevc/\(stream)"))
        #expect(received.accessUnits.count == expected.count)
        // FFmpeg's HEVC parser leaves the zero_byte of a 4-byte start code at the end of the NAL
        // unit before it (see HEVCAccessUnitTests), and sends it: trailing zero bytes
        // (trailing_zero_8bits, no part of a NAL unit) are set aside on both sides.
        let ours = received.nalUnits.map { $0.map(Self.withoutTrailingZeros) }
        let theirs = expected.map { $0.nalUnits.map(Self.withoutTrailingZeros) }
        let same = ours == theirs  // compared apart, so that a failure does not print every byte
        #expect(same, "first different access unit: \(ours.indices.first { $0 < theirs.count && ours[$0] != theirs[$0] } ?? min(ours.count, theirs.count))")
    }

    /// GStreamer's `rtph265pay` (APs with `aggregate-mode` on; `config-interval=-1` repeats
    /// VPS, SPS and PPS before each IRAP): the stream's other NAL units unit for unit, and its
    /// parameter sets.
    @Test(arguments: ["main_gop_bframes_cra.265", "slices4_vui_hrd_aud.265", "mp4ff_1080p_50f.265"], ["zero-latency", "max", "none"])
    func readsWhatGStreamerSends(stream: String, aggregateMode: String) throws {
        let input = try TestFixtures.path("hevc/\(stream)")
        let socket = try LoopbackUDP()
        let (packets, status) = try socket.receive(fromProgram: socket.gstreamerSender(file: input, parser: "h265parse", payloader: "rtph265pay",
                                                                                       aggregateMode: aggregateMode))
        #expect(status == 0)
        #expect(packets.allSatisfy { $0.count <= 1200 })
        let received = HEVCDepacketized(packets)
        #expect(received.diagnostics.isEmpty, "\(received.diagnostics.prefix(3))")
        let ours = received.nalUnits.flatMap { $0.map(Self.withoutTrailingZeros) }
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let theirs = AnnexB.nalUnits(in: bytes).map { Self.withoutTrailingZeros(bytes[$0.range]) }
        let isParameterSet = { (unit: ArraySlice<UInt8>) in (32...34).contains((unit[unit.startIndex] >> 1) & 0x3F) }
        let same = ours.filter { !isParameterSet($0) } == theirs.filter { !isParameterSet($0) }
        #expect(same, "\(ours.count) NAL units for \(theirs.count)")
        #expect(Set(ours.filter(isParameterSet).map(Array.init)) == Set(theirs.filter(isParameterSet).map(Array.init)))
        if aggregateMode != "none" {
            #expect(packets.contains { $0.count > 12 && ($0[12] >> 1) & 0x3F == 48 }, "APs from aggregate-mode=\(aggregateMode)")
        }
    }

    /// The streams FFmpeg reads back from us: one plain, one with slices and AUDs, the 1080p clip
    /// (FUs), 4:2:2 10-bit.
    static let sentStreams = ["main_gop_bframes_cra.265", "slices4_vui_hrd_aud.265", "mp4ff_1080p_50f.265", "rext_422_10.265"]

    @Test(arguments: sentStreams)
    func ffmpegReadsWhatWeSend(stream: String) throws {
        let bytes = try TestFixtures.data("hevc/\(stream)")
        let units = HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hevc-rtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdpPath = directory.appendingPathComponent("stream.sdp").path
        let outputPath = directory.appendingPathComponent("out.265").path

        let firstUnits = units.first?.nalUnits.map(Array.init) ?? []
        let sets = firstUnits.filter { (32...34).contains(($0[0] >> 1) & 0x3F) }
        // FFmpeg binds the port our SDP names: the test waits for its socket there (another
        // port when it could not bind one), and sends only then.
        var description = SessionDescription(hevcParameterSets: sets, address: "127.0.0.1", port: 0)
        let (ffmpeg, port) = try PeerPort.start(.udp, { port in
            description = SessionDescription(hevcParameterSets: sets, address: "127.0.0.1", port: port)
            try description.text.write(toFile: sdpPath, atomically: true, encoding: .utf8)
            // It waits for its first probe's bytes without analysing further, and ends once it has
            // written as many access units as were sent.
            return try Subprocess.launch("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-protocol_whitelist", "file,udp,rtp",
                                                          "-analyzeduration", "0", "-probesize", "32", "-i", sdpPath,
                                                          "-c", "copy", "-frames:v", "\(units.count)", "-f", "hevc", "-y", outputPath])
        }, process: { $0 })
        // Read back by us as written.
        #expect(try SessionDescription(parsingHEVC: description.text).parameterSets == sets)

        var packetizer = HEVCRTPPacketizer(configuration: .init(maximumTransmissionUnit: 1200))
        var packets: [[UInt8]] = []
        for (index, unit) in units.enumerated() {
            packets += try packetizer.packets(hvcc: unit.data, presentationTime: .milliseconds(40 * index), parameterSets: sets)
        }
        // FFmpeg hands out an access unit when the next one begins: one more (the last again)
        // lets it write the last, and stop at the count.
        if let last = units.last {
            packets += try packetizer.packets(hvcc: last.data, presentationTime: .milliseconds(40 * units.count), parameterSets: sets)
        }
        let sender = try LoopbackUDP()
        sender.send(packets, to: port)
        // SIGINT (FFmpeg then writes what it has) if it has not ended 10 s after the last packet.
        let exited = DispatchSemaphore(value: 0)
        Thread.detachNewThread { ffmpeg.waitUntilExit(); exited.signal() }
        if exited.wait(timeout: .now() + 10) == .timedOut { ffmpeg.interrupt() }
        ffmpeg.waitUntilExit()
        #expect(ffmpeg.terminationReason == .exit && ffmpeg.terminationStatus == 0, "FFmpeg ended by SIGINT or failed")

        let output = try [UInt8](Data(contentsOf: URL(fileURLWithPath: outputPath)))
        let same = Self.nalUnits(ofAnnexB: output) == Self.nalUnits(ofAnnexB: bytes)
        #expect(same, "FFmpeg wrote \(output.count) bytes for a \(bytes.count)-byte stream")
    }
}
