import Foundation
import H264
import MediaContainers
import H264TestSupport
import Testing

/// `ReceivedAnnexBWriter` (moved out of `h264 receive`): joining a stream mid-way, it skips up
/// to the first IDR and writes an Annex-B stream FFmpeg decodes to the same pictures as the
/// original from that IDR on, with SPS and PPS before every IDR.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct ReceivedAnnexBWriterTests {
    /// 176x144, an IDR picture mid-stream, its SPS and PPS only at the start.
    static let stream = "conformance/MIDR_MW_D.264"

    static func accessUnits() throws -> [AccessUnit] {
        var receiver = AccessUnitReceiver()
        return (receiver.receive(try TestFixtures.data(Self.stream)) + receiver.finish()).compactMap { event in
            if case .accessUnit(let unit) = event { return unit }
            return nil
        }
    }

    /// FFmpeg's framemd5 lines (size and MD5) of an Annex-B stream given on standard input.
    static func ffmpegFrames(_ stdin: [UInt8]?, path: String = "-") throws -> [String] {
        let output = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-f", "h264", "-i", path,
                                                         "-fps_mode", "passthrough", "-f", "framemd5", "-"], stdin: stdin)
        #expect(output.status == 0, "\(output.stderr)")
        return String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: ",").suffix(2).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") }
    }

    /// The NAL unit types of an Annex-B stream, in order.
    static func nalUnitTypes(_ annexB: [UInt8]) -> [Int] {
        var types: [Int] = []
        var zeros = 0
        for (index, byte) in annexB.enumerated() {
            if byte == 1 && zeros >= 2, index + 1 < annexB.count { types.append(Int(annexB[index + 1] & 0x1F)) }
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return types
    }

    @Test("joining after the first IDR: skipped up to the next, then FFmpeg's frames, SPS and PPS before each IDR",
          arguments: [false, true])
    func joinsAtTheNextIDR(parameterSetsFromDescription: Bool) throws {
        let units = try Self.accessUnits()
        let format = try #require(units.first?.formatDescription)
        let firstIDR = try #require(units.indices.dropFirst().first { units[$0].isIDR })
        var writer = ReceivedAnnexBWriter(parameterSets: parameterSetsFromDescription ? format : nil)
        var annexB: [UInt8] = []
        var idrs = 0
        for var unit in units.dropFirst() {
            // Parameter sets only in the session's description (an SDP's sprop-parameter-sets).
            if parameterSetsFromDescription { unit.formatDescription = nil }
            guard writer.take(unit) else { continue }
            let bytes = try writer.annexB(unit)
            if unit.isIDR {
                idrs += 1
                #expect(Array(Self.nalUnitTypes(bytes).prefix(3)) == [7, 8, 5], "SPS, PPS, then the IDR slice")
            }
            #expect(bytes.starts(with: [0, 0, 0, 1]))
            annexB += bytes
        }
        #expect(writer.skipped == firstIDR - 1)
        #expect(writer.written == units.count - firstIDR)
        #expect(idrs == units[firstIDR...].filter(\.isIDR).count && idrs >= 1)
        let original = try Self.ffmpegFrames(nil, path: try TestFixtures.path(Self.stream))
        #expect(try Self.ffmpegFrames(annexB) == Array(original.dropFirst(firstIDR)))
    }

    @Test("nothing is taken before an IDR, and counts start at zero")
    func nothingBeforeAnIDR() throws {
        let units = try Self.accessUnits().filter { !$0.isIDR }.prefix(3)
        var writer = ReceivedAnnexBWriter(parameterSets: nil)
        #expect(writer.written == 0 && writer.skipped == 0)
        for unit in units {
            let taken = writer.take(unit)
            #expect(!taken)
        }
        #expect(writer.written == 0 && writer.skipped == units.count)
    }
}
