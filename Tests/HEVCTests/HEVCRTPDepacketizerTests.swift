import Testing
import H264
import HEVC
import H264TestSupport

/// RFC 7798 packets made by our packetizer, read back by our depacketizer: every shared stream
/// unit for unit; and each damaged or unusual packet: lost and missing fragments, truncated
/// aggregation packets, DONL/DOND, PACI, packets shorter than their headers, timestamps that
/// never advance.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct HEVCRTPDepacketizerTests {
    @Test(arguments: TestFixtures.hevcStreams)
    func roundTrip(stream: String) throws {
        let sent = try HEVCPacketizedStream(stream)
        let received = HEVCDepacketized(sent.packets)
        #expect(received.diagnostics.isEmpty, "\(received.diagnostics.prefix(3))")
        #expect(received.losses.isEmpty)
        #expect(received.nalUnits == sent.nalUnits)
        #expect(received.accessUnits.allSatisfy { $0.endedByMarker })
        #expect(sent.packets.allSatisfy { $0.count <= 400 - 28 })
    }

    /// The small MTU makes every kind of payload on the 1080p clip: APs of parameter sets,
    /// FUs of slices, single NAL units.
    @Test func packetizerMakesEveryStructure() throws {
        let types = Set(try HEVCPacketizedStream("mp4ff_1080p_50f.265").packets.map { ($0[12] >> 1) & 0x3F })
        #expect(types.contains(48) && types.contains(49) && types.contains { $0 < 48 })
    }

    /// A sender whose timestamps never advance and that never sets the marker bit (FFmpeg sending
    /// a raw `.265` stamps every packet alike): the access-unit rule still cuts picture by picture.
    @Test func timestampsThatNeverAdvance() throws {
        let sent = try HEVCPacketizedStream("slices4_vui_hrd_aud.265", stepMilliseconds: 0)
        let unmarked = sent.packets.map { packet in var packet = packet; packet[1] &= 0x7F; return packet }
        let received = HEVCDepacketized(unmarked)
        #expect(received.diagnostics.isEmpty)
        #expect(received.nalUnits == sent.nalUnits)
        #expect(Set(received.accessUnits.map(\.timestamp)).count == 1)
    }

    /// The packets of the first access unit fragmented into three packets or more, as indexes.
    static func fragmentedRun(_ sent: HEVCPacketizedStream) -> (unit: Int, packets: [Int])? {
        var index = 0
        while index < sent.packets.count {
            let packet = sent.packets[index]
            if (packet[12] >> 1) & 0x3F == 49, packet[14] & 0x80 != 0 {
                var end = index
                while sent.packets[end][14] & 0x40 == 0 { end += 1 }
                if end - index >= 2 { return (sent.accessUnitOfPacket[index], Array(index...end)) }
                index = end
            }
            index += 1
        }
        return nil
    }

    /// A lost middle or end fragment (a gap in sequence numbers): a loss, a keyframe request,
    /// and the access unit of that NAL unit dropped — every other access unit arrives whole.
    @Test(arguments: ["middle", "end"])
    func lostFragment(which: String) throws {
        let sent = try HEVCPacketizedStream("main_gop_bframes_cra.265", mtu: 200)
        let run = try #require(Self.fragmentedRun(sent))
        let lost = which == "middle" ? run.packets[1] : run.packets.last!
        var packets = sent.packets
        packets.remove(at: lost)
        let received = HEVCDepacketized(packets)
        #expect(received.losses.map(\.packetCount) == [1])
        #expect(received.keyframeRequests == 1)
        var expected = sent.nalUnits
        expected.remove(at: run.unit)
        #expect(received.nalUnits == expected)
    }

    /// A fragment sequence without its end (a sender's bug, no sequence gap): the diagnostic
    /// names the FU, and only that access unit is dropped.
    @Test func fragmentWithoutEnd() throws {
        let sent = try HEVCPacketizedStream("main_gop_bframes_cra.265", mtu: 200)
        let run = try #require(Self.fragmentedRun(sent))
        var packets = sent.packets
        packets.remove(at: run.packets.last!)
        for index in run.packets.last!..<packets.count {  // renumbered: nothing is lost
            packets[index][2...3] = ArraySlice(bigEndianBytes(UInt16(truncatingIfNeeded: 65_500 + index)))
        }
        let received = HEVCDepacketized(packets)
        #expect(received.losses.isEmpty)
        #expect(received.diagnostics.map(\.code) == [.incompleteFragment])
        var expected = sent.nalUnits
        expected.remove(at: run.unit)
        let got = received.nalUnits
        #expect(got == expected, "\(got.count) access units for \(expected.count), first different: \(got.indices.first { $0 < expected.count && got[$0] != expected[$0] } ?? -1), run in \(run.unit)")
    }

    /// An FU without its start fragment (a stream joined mid-NAL unit).
    @Test func fragmentWithoutStart() throws {
        let sent = try HEVCPacketizedStream("main_gop_bframes_cra.265", mtu: 200)
        let run = try #require(Self.fragmentedRun(sent))
        let first = run.packets.first!
        let received = HEVCDepacketized(Array(sent.packets[(first + 1)...]))
        #expect(received.diagnostics.first?.code == .missingFragmentStart)
        #expect(received.diagnostics.first?.message.contains("FU fragment") == true)
        #expect(received.nalUnits == Array(sent.nalUnits[(run.unit + 1)...]))
    }

    @Test(arguments: [
        // AP header (type 48), then a size of 16 with 3 bytes after it.
        ([0x60, 0x01, 0x00, 0x10, 0x40, 0x01, 0x0C], MediaError.Code.lengthPastEnd),
        // A unit, then one byte where a size belongs.
        ([0x60, 0x01, 0x00, 0x03, 0x40, 0x01, 0x0C, 0x00], .truncated),
        ([0x60, 0x01, 0x00, 0x00], .emptyNALUnit),
        // PACI (type 50), and an undefined type 60.
        ([0x64, 0x01, 0x00, 0x00, 0x00], .unsupported),
        ([0x78, 0x01, 0x00], .unsupported),
        // A payload of one byte; an FU of payload header alone.
        ([0x02], .truncated),
        ([0x62, 0x01], .truncated),
    ] as [([UInt8], MediaError.Code)])
    func damagedPayload(payload: [UInt8], code: MediaError.Code) throws {
        let received = HEVCDepacketized([rtpPacket(1, marker: true, payload)])
        #expect(received.diagnostics.map(\.code) == [code])
        #expect(received.accessUnits.isEmpty)
        if payload.count > 1, payload[0] == 0x64 { #expect(received.diagnostics[0].message.contains("PACI")) }
    }

    @Test(arguments: [0, 5, 11]) func packetShorterThanItsHeader(count: Int) {
        let received = HEVCDepacketized([Array(rtpPacket(1, [0x40, 0x01, 0x0C]).prefix(count))])
        #expect(received.diagnostics.count == 1)
        #expect(received.accessUnits.isEmpty)
    }

    /// With `sprop-max-don-diff` > 0 every payload carries decoding order numbers: a DONL after a
    /// single NAL unit's header and a start FU's FU header, a DONL before an AP's first unit and
    /// a DOND before the others. Inserted into the round trip's packets, they are skipped.
    @Test func decodingOrderNumbers() throws {
        let sent = try HEVCPacketizedStream("idr_radl_temporal_layers.265", mtu: 300)
        var don: UInt16 = 0
        let withNumbers = sent.packets.map { packet -> [UInt8] in
            let type = (packet[12] >> 1) & 0x3F
            var result = Array(packet[0..<14])
            switch type {
            case 48:
                var position = 14
                var first = true
                while position < packet.count {
                    result += first ? bigEndianBytes(don) : [1]
                    let size = Int(packet[position]) << 8 | Int(packet[position + 1])
                    result += packet[position..<(position + 2 + size)]
                    position += 2 + size
                    first = false
                    don &+= 1
                }
            case 49:
                result.append(packet[14])
                if packet[14] & 0x80 != 0 { result += bigEndianBytes(don); don &+= 1 }
                result += packet[15...]
            default:
                result += bigEndianBytes(don) + packet[14...]
                don &+= 1
            }
            return result
        }
        let received = HEVCDepacketized(withNumbers, maximumDONDifference: 2)
        #expect(received.diagnostics.isEmpty, "\(received.diagnostics.prefix(3))")
        #expect(received.nalUnits == sent.nalUnits)
        // Without the SDP's word, the same packets are misread, never trapped on.
        _ = HEVCDepacketized(withNumbers)
        // A single NAL unit packet with no room for its DONL and payload.
        let short = HEVCDepacketized([rtpPacket(1, marker: true, [0x40, 0x01, 0x00])], maximumDONDifference: 1)
        #expect(short.diagnostics.map(\.field) == ["DONL"])
    }
}

/// `value` as two big-endian bytes.
func bigEndianBytes(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
