import H264
import H264TestSupport
import Testing
import RTP

/// RTP as real cameras send it, each quirk read as FFmpeg and the other players read it: every
/// access unit of a real stream comes out whole, with the timestamp of its pictures, and
/// without a diagnostic. Each case names its public source. (`DepacketizedEvents` also checks
/// `RTPZeroCopyDepacketizer` against `RTPDepacketizer` on the same packets.)
@Suite(.ownThread) struct RTPDepacketizerQuirksTests {
    static let accessUnits = AccessUnitAssembler.accessUnits(inAnnexB: (try? TestFixtures.data("conformance/MIDR_MW_D.264")) ?? [])

    /// 90 kHz timestamps 3,000 apart (30 fps).
    static func timestamp(_ index: Int) -> UInt32 { UInt32(truncatingIfNeeded: 1_000 + 3_000 * index) }

    /// `units` sent as the camera would, built by `packets(accessUnitIndex, nalUnits)`, with
    /// sequence numbers in order.
    static func send(_ packets: (Int, [[UInt8]]) -> [(payload: [UInt8], timestamp: UInt32, marker: Bool)]) -> [[UInt8]] {
        var sequence: UInt16 = 100
        var sent: [[UInt8]] = []
        for (index, unit) in accessUnits.enumerated() {
            for packet in packets(index, unit.nalUnits.map(Array.init)) {
                sent.append(RTPHeader(marker: packet.marker, payloadType: 96, sequenceNumber: sequence, timestamp: packet.timestamp,
                                      ssrc: 7).bytes + packet.payload)
                sequence &+= 1
            }
        }
        return sent
    }

    /// FU-A packets of `nalUnit` in pieces of at most `piece` bytes; `header` rewrites each FU header.
    static func fragments(_ nalUnit: [UInt8], piece: Int, header: (UInt8) -> UInt8 = { $0 }) -> [[UInt8]] {
        let indicator = (nalUnit[0] & 0xE0) | 28, body = Array(nalUnit.dropFirst())
        var pieces = stride(from: 0, to: body.count, by: piece).map { Array(body[$0..<min($0 + piece, body.count)]) }
        if pieces.isEmpty { pieces = [[]] }
        return pieces.enumerated().map { index, bytes in
            let flags: UInt8 = (index == 0 ? 0x80 : 0) | (index == pieces.count - 1 ? 0x40 : 0)
            return [indicator, header(flags | (nalUnit[0] & 0x1F))] + bytes
        }
    }

    /// The depacketized access units are the stream's (or `expected`), with each picture's
    /// timestamp, and nothing was reported.
    static func expectWhole(_ events: DepacketizedEvents, expected: [[UInt8]] = accessUnits.map(\.data),
                            sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(events.diagnostics.isEmpty, "\(events.diagnostics.prefix(3))", sourceLocation: sourceLocation)
        #expect(events.accessUnits.count == accessUnits.count, sourceLocation: sourceLocation)
        let same = events.accessUnits.map(\.accessUnit.data) == expected // apart, so that a failure does not print every byte
        #expect(same, "the access units differ", sourceLocation: sourceLocation)
        #expect(events.accessUnits.map(\.timestamp) == accessUnits.indices.map(timestamp), sourceLocation: sourceLocation)
    }

    @Test func theFixtureHasParameterSetsBeforeSeveralIDRs() {
        #expect(Self.accessUnits.count > 10 && Self.accessUnits.filter(\.isIDR).count > 1)
    }

    /// scottlamb/retina#115 (gortsplib accepts them too): a NAL unit that ends with an FU-A end
    /// fragment carrying no payload byte.
    @Test func anEmptyEndFragment() {
        let packets = Self.send { index, units in
            units.enumerated().flatMap { position, unit in
                var pieces = unit.count > 100 ? Self.fragments(unit, piece: 600) : [unit]
                if unit.count > 100 {
                    pieces[pieces.count - 1][1] &= ~0x40                                       // the last with payload is not the end…
                    pieces.append([pieces[0][0], 0x40 | (unit[0] & 0x1F)])                    // …an empty fragment is
                }
                return pieces.enumerated().map { piece, payload in
                    (payload, Self.timestamp(index), position == units.count - 1 && piece == pieces.count - 1)
                }
            }
        }
        Self.expectWhole(DepacketizedEvents(packets))
    }

    /// scottlamb/retina#131 (an OpenIPC camera): FU-A packets with both the start and the end bit set.
    @Test func fragmentsWithStartAndEndSet() {
        let packets = Self.send { index, units in
            units.enumerated().map { position, unit in
                (Self.fragments(unit, piece: 1 << 20)[0], Self.timestamp(index), position == units.count - 1)
            }
        }
        Self.expectWhole(DepacketizedEvents(packets))
    }

    /// scottlamb/retina#109 (HeroSpeed firmware): the FU header's reserved bit set, which RFC 6184
    /// says receivers ignore.
    @Test func theReservedBitOfTheFUHeaderSet() {
        let packets = Self.send { index, units in
            units.enumerated().flatMap { position, unit in
                let pieces = Self.fragments(unit, piece: 500) { $0 | 0x20 }
                return pieces.enumerated().map { piece, payload in
                    (payload, Self.timestamp(index), position == units.count - 1 && piece == pieces.count - 1)
                }
            }
        }
        Self.expectWhole(DepacketizedEvents(packets))
    }

    /// scottlamb/retina#13 (Reolink RLC-822A): SPS and PPS before every IDR, sent with the
    /// previous picture's timestamp, the SPS with the marker bit set; the pictures keep their
    /// own timestamps.
    @Test func parameterSetsWithThePreviousTimestampAndTheMarkerBit() {
        let first = Self.accessUnits[0].nalUnits.map(Array.init)
        let parameterSets = first.filter { [7, 8].contains($0[0] & 0x1F) }
        #expect(parameterSets.count == 2)
        // Every later IDR gets the stream's SPS and PPS in front, as this camera sends them.
        func units(_ index: Int, _ units: [[UInt8]]) -> [[UInt8]] {
            index > 0 && Self.accessUnits[index].isIDR ? parameterSets + units : units
        }
        let packets = Self.send { index, nalUnits in
            let sent = units(index, nalUnits)
            return sent.enumerated().map { position, unit in
                let type = unit[0] & 0x1F, isParameterSet = type == 7 || type == 8
                return (unit, Self.timestamp(isParameterSet ? max(index - 1, 0) : index), type == 7 || position == sent.count - 1)
            }
        }
        let expected = Self.accessUnits.enumerated().map { index, unit in
            units(index, unit.nalUnits.map(Array.init)).flatMap { nalUnit -> [UInt8] in
                withUnsafeBytes(of: UInt32(nalUnit.count).bigEndian, Array.init) + nalUnit
            }
        }
        Self.expectWhole(DepacketizedEvents(packets), expected: expected)
    }

    /// Senders that never set the marker bit (AV1 RTP spec's note, echoed by players: receivers
    /// must cope): access units are cut by their content, the last at the end of the stream.
    @Test func noMarkerBitAtAll() {
        let packets = Self.send { index, units in units.map { ($0, Self.timestamp(index), false) } }
        Self.expectWhole(DepacketizedEvents(packets))
    }

    /// bluenviron/mediamtx#6255 (Intelbras DVRs): now and then a picture stamped hours away from
    /// its neighbours, in the future or in the past (and scottlamb/retina#64: a step back, which
    /// that client treats as fatal). Access units are cut by the marker bit and their content,
    /// not by the size of the step: each comes out whole, with the timestamp it was sent with.
    @Test func timestampsThatJump() {
        func stamp(_ index: Int) -> UInt32 {
            switch index % 7 {
            case 3: Self.timestamp(index) &+ 37_600 * 90_000
            case 5: Self.timestamp(index) &- 9_800 * 90_000
            case 6: Self.timestamp(index) &- 2_692
            default: Self.timestamp(index)
            }
        }
        let packets = Self.send { index, units in units.enumerated().map { ($1, stamp(index), $0 == units.count - 1) } }
        let events = DepacketizedEvents(packets)
        #expect(events.diagnostics.isEmpty, "\(events.diagnostics.prefix(3))")
        let same = events.accessUnits.map(\.accessUnit.data) == Self.accessUnits.map(\.data)
        #expect(same, "the access units differ")
        #expect(events.accessUnits.map(\.timestamp) == Self.accessUnits.indices.map(stamp))
    }
}

