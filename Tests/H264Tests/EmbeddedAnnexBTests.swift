import Testing
@testable import H264
import H264TestSupport
import MediaCore
import H264
import MediaContainers
import RTP

/// Annex-B where lengths (AVCC) or an RTP payload's NAL unit header belong: the one rule of
/// `EmbeddedAnnexB`, as `AVCC.read`, the AVCC → Annex-B conversions, `FLVReader` and both
/// depacketizers follow it. Public sources of the quirk:
/// - Chrome's MediaRecorder writes Annex-B samples into Matroska (w3c/webcodecs issue #125:
///   "the bitstream in webm is in Annex B (0 0 0 1 startcodes before NALUs) format"); FFmpeg's
///   decoder reads them (checked in `AnnexBSampleFileTests`).
/// - V380 cameras send RTP payloads that are Annex-B (scottlamb/retina issue #68 and pull
///   request #100); gortsplib strips Annex-B from received NAL units (bluenviron/gortsplib
///   issue #608); FFmpeg's `rtpdec_h264.c` passes NAL unit type 0 on with a start code before
///   it, and its Annex-B splitter reads the rest.
@Suite(.ownThread) struct EmbeddedAnnexBTests {
    static let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xD9, 0x00, 0xA0, 0x47, 0xFE, 0xC8]
    static let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
    static let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x33, 0xFF, 0xFE, 0xF6, 0xF0]
    static let slice: [UInt8] = [0x41, 0x9A, 0x21, 0x6C, 0x41, 0xFF]

    static func annexB(_ units: [[UInt8]], threeByte: Bool = false) -> [UInt8] {
        units.flatMap { (threeByte ? AnnexB.threeByteStartCode : AnnexB.fourByteStartCode) + $0 }
    }

    static func avcc(_ units: [[UInt8]], lengthSize: Int = 4) throws -> [UInt8] {
        try AVCC.data(nalUnits: units, lengthSize: lengthSize)
    }

    static func units(_ reading: AVCCReading, in bytes: [UInt8]) -> [[UInt8]] {
        reading.nalUnits.map { Array(bytes[$0]) }
    }

    @Test(arguments: [(4, false), (4, true), (2, false), (2, true), (1, false), (1, true)])
    func aSampleOfAnnexBIsReadAsAnnexBWithOneWarning(lengthSize: Int, threeByte: Bool) throws {
        let units = [Self.sps, Self.pps, Self.idr, Self.slice]
        let bytes = Self.annexB(units, threeByte: threeByte)
        let reading = try AVCC.read(bytes, lengthSize: lengthSize)
        #expect(Self.units(reading, in: bytes) == units)
        #expect(reading.annexBOffset == 0)
        #expect(reading.warnings.map(\.code) == [.unexpectedStartCode])
        #expect(reading.warnings.first?.byteOffset == 0)
        #expect(reading.warnings.first?.field == "NALUnitLength")
        #expect(reading.skipped.isEmpty)
        // The strict split still refuses it: the tolerance is the reading's, not the framing's.
        #expect(throws: MediaError.self) { try AVCC.nalUnits(in: bytes, lengthSize: lengthSize) }
    }

    @Test func lengthsThenAnnexBSwitchesWhereTheStartCodeIs() throws {
        let head = try Self.avcc([Self.sps, Self.pps])
        let bytes = head + Self.annexB([Self.idr, Self.slice])
        let reading = try AVCC.read(bytes, lengthSize: 4)
        #expect(Self.units(reading, in: bytes) == [Self.sps, Self.pps, Self.idr, Self.slice])
        #expect(reading.annexBOffset == head.count)
        #expect(reading.warnings.map(\.byteOffset) == [head.count])
    }

    /// NAL units of 256–511 bytes have 4-byte lengths that read `00 00 01 xx`: still lengths.
    @Test(arguments: [256, 300, 511])
    func aGenuineLengthThatLooksLikeAStartCodeStaysALength(size: Int) throws {
        let long = [0x41] + (1..<size).map { UInt8(truncatingIfNeeded: $0 | 1) }
        let units = [Self.sps, long, Self.slice, long]
        let bytes = try Self.avcc(units)
        #expect(Array(bytes[0..<4]) == [0, 0, 0, UInt8(Self.sps.count)])
        #expect(Array(bytes[(4 + Self.sps.count)..<(4 + Self.sps.count + 3)]) == [0, 0, 1])
        let reading = try AVCC.read(bytes, lengthSize: 4)
        #expect(Self.units(reading, in: bytes) == units)
        #expect(reading.annexBOffset == nil && reading.warnings.isEmpty)
        // The last unit alone: it reaches the end exactly, so it is a length too.
        let last = try Self.avcc([long])
        #expect(try AVCC.read(last, lengthSize: 4).warnings.isEmpty)
    }

    /// A truncated AVCC stream whose lengths held for three units after a `00 00 01 xx` length
    /// still ends in its framing error, where it is truncated: it is not read as Annex-B.
    @Test func aTruncatedAVCCStreamKeepsItsError() throws {
        let long = [0x41] + [UInt8](repeating: 0x5A, count: 299)
        let whole = try Self.avcc([Self.sps, long, Self.slice, Self.slice, Self.slice, long])
        let cut = Array(whole.dropLast(100))
        #expect {
            _ = try AVCC.read(cut, lengthSize: 4)
        } throws: { error in
            (error as? MediaError)?.code == .lengthPastEnd && (error as? MediaError)?.byteOffset == whole.count - 304
        }
    }

    @Test func damagedUnitsOfTheAnnexBPartAreReportedAndSkipped() throws {
        let damaged: [UInt8] = [0xE5, 0x01, 0x02]  // forbidden_zero_bit set
        let bytes = Self.annexB([Self.sps, Self.pps, damaged, Self.idr])
        let reading = try AVCC.read(bytes, lengthSize: 4)
        #expect(Self.units(reading, in: bytes) == [Self.sps, Self.pps, Self.idr])
        #expect(reading.skipped.map(\.code) == [.forbiddenZeroBit])
        let offset = 3 * 4 + Self.sps.count + Self.pps.count
        #expect(reading.skipped.first?.byteOffset == offset)
        #expect(reading.warnings.count == 1)
    }

    /// An Annex-B sample converts exactly as the same access unit in AVCC does: the same
    /// parameter sets inserted before its IDR, the same start codes.
    @Test func anAnnexBSampleConvertsAsItsAVCCTwin() throws {
        let record = try AVCDecoderConfigurationRecord(sequenceParameterSets: [Self.sps], pictureParameterSets: [Self.pps])
        for units in [[Self.idr, Self.slice], [Self.pps, Self.idr], [Self.slice]] {
            let expected = try AnnexB.fromAVCC(try Self.avcc(units), lengthSize: 4, parameterSets: record)
            for threeByte in [false, true] {
                #expect(try AnnexB.fromAVCC(Self.annexB(units, threeByte: threeByte), lengthSize: 4, parameterSets: record) == expected)
            }
            let stream = try Self.avcc([Self.slice]) + Self.annexB(units)
            let expectedStream = try AnnexB.fromAVCCStream(try Self.avcc([Self.slice] + units), lengthSize: 4, parameterSets: record)
            #expect(try AnnexB.fromAVCCStream(stream, lengthSize: 4, parameterSets: record) == expectedStream)
        }
    }

    @Test func inPlaceConversionLeavesTheAnnexBPartAsItIs() throws {
        let head = try Self.avcc([Self.sps, Self.pps])
        let tail = Self.annexB([Self.idr, Self.slice], threeByte: true)
        var bytes = head + tail
        try AnnexB.convertAVCCInPlace(&bytes)
        #expect(bytes == Self.annexB([Self.sps, Self.pps]) + tail)
    }

    /// An FLV coded-frames tag whose payload is Annex-B: the frame's NAL units, then the warning.
    @Test func anFLVTagOfAnnexBIsReadAsAnnexB() throws {
        let record = try AVCDecoderConfigurationRecord(sequenceParameterSets: [Self.sps], pictureParameterSets: [Self.pps])
        var writer = FLVWriter()
        try writer.appendSequenceHeader(FormatDescription(configurationRecord: record))
        try writer.appendFrame(Self.annexB([Self.idr, Self.slice], threeByte: true), isKeyframe: true, decodeTime: 0, presentationTime: 0)
        try writer.appendFrame(try Self.avcc([Self.slice]), isKeyframe: false, decodeTime: 40, presentationTime: 40)
        let contents = try FLVReader.read(writer.bytes)
        #expect(contents.frames.map { $0.h264AccessUnit?.nalUnits.map(Array.init) } == [[Self.idr, Self.slice], [Self.slice]])
        #expect(contents.warnings.map(\.code) == [.unexpectedStartCode])
        #expect(contents.skippedTags.isEmpty)
    }

    // MARK: - RTP

    static func packet(_ payload: [UInt8], sequenceNumber: UInt16, timestamp: UInt32, marker: Bool) -> [UInt8] {
        RTPHeader(marker: marker, payloadType: 96, sequenceNumber: sequenceNumber, timestamp: timestamp, ssrc: 7).bytes + payload
    }

    /// V380-style: every NAL unit of a real stream in its own packet behind a start code, or a
    /// whole access unit in one packet as Annex-B (3- and 4-byte start codes): the same access
    /// units as the stream, one warning.
    @Test(arguments: [false, true])
    func payloadsThatBeginWithAStartCodeAreReadAsAnnexB(wholeAccessUnits: Bool) throws {
        let accessUnits = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("conformance/MIDR_MW_D.264"))
        var packets: [[UInt8]] = []
        for (index, unit) in accessUnits.enumerated() {
            let nalUnits = unit.nalUnits.map(Array.init)
            let timestamp = UInt32(index * 3000)
            if wholeAccessUnits {
                let payload = nalUnits.enumerated().flatMap { (i, nal) in (i % 2 == 0 ? AnnexB.fourByteStartCode : AnnexB.threeByteStartCode) + nal }
                packets.append(Self.packet(payload, sequenceNumber: UInt16(packets.count), timestamp: timestamp, marker: true))
            } else {
                for (i, nal) in nalUnits.enumerated() {
                    packets.append(Self.packet(AnnexB.fourByteStartCode + nal, sequenceNumber: UInt16(packets.count),
                                               timestamp: timestamp, marker: i == nalUnits.count - 1))
                }
            }
        }
        let events = DepacketizedEvents(packets)
        #expect(events.diagnostics.map(\.code) == [.unexpectedStartCode])
        #expect(events.diagnostics.first?.field == "nal_unit_type")
        #expect(events.nalUnits == accessUnits.map(\.nalUnits))
    }

    @Test func aDamagedUnitInAnAnnexBPayloadIsReportedAndSkipped() {
        let payload = Self.annexB([Self.sps, [0x80, 0x01], Self.pps, Self.idr])
        let events = DepacketizedEvents([Self.packet(payload, sequenceNumber: 1, timestamp: 90, marker: true)])
        #expect(events.diagnostics.map(\.code) == [.unexpectedStartCode, .forbiddenZeroBit])
        #expect(events.nalUnits.map { $0.map(Array.init) } == [[Self.sps, Self.pps, Self.idr]])
    }
}
