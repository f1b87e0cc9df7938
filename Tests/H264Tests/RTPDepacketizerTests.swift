import H264
import H264TestSupport
import Testing
import RTP

@Suite("RTP depacketizer", .ownThread)
struct RTPDepacketizerTests {
    /// 40 ms per access unit (MIDR_MW_D has 100) from 4,294,960,000, wrapping.
    static let timestamps: [UInt32] = (0..<100).map { 4_294_960_000 &+ UInt32(3600 * $0) }

    static func nalUnits(_ units: [AccessUnit]) -> [[ArraySlice<UInt8>]] { units.map(\.nalUnits) }

    /// 200 bytes: FU-A start fragments too short for the assembler to place a NAL unit from them
    /// (``AccessUnitAssembler`` gets each fragmented NAL unit whole); the others: written straight
    /// into the access unit.
    @Test(arguments: [1200, 1500, 600, 200])
    func roundTripGivesTheSameAccessUnits(mtu: Int) throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration(mtu: mtu))
        #expect(stream.accessUnits.count == 100)
        let events = DepacketizedEvents(stream.packets)
        #expect(events.diagnostics.isEmpty && events.losses.isEmpty)
        #expect(events.nalUnits == Self.nalUnits(stream.accessUnits))
        #expect(events.accessUnits.allSatisfy { $0.endedByMarker })
        #expect(events.accessUnits.map(\.timestamp) == Self.timestamps)
    }

    @Test func reorderedPacketsAreReorderedWithinTheWindow() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        var packets = stream.packets
        // Swap neighbours and move some packets up to 5 places later.
        var generator = SplitMix64(seed: 7)
        // (The first packet stays first: it sets the sequence the receiver expects.)
        for index in stride(from: 1, to: packets.count - 6, by: 7) {
            let distance = Int.random(in: 1...5, using: &generator)
            packets.swapAt(index, index + distance)
        }
        #expect(packets != stream.packets)
        let events = DepacketizedEvents(packets, configuration: .init(reorderWindow: 8))
        #expect(events.losses.isEmpty)
        #expect(events.diagnostics.isEmpty, "\(events.diagnostics)")
        #expect(events.nalUnits == Self.nalUnits(stream.accessUnits))
        // Without a window, the same packets are losses, and no partial access unit comes out.
        let strict = DepacketizedEvents(packets, configuration: .init(reorderWindow: 0))
        #expect(!strict.losses.isEmpty)
        #expect(strict.keyframeRequests == strict.losses.count)
        for unit in strict.nalUnits { #expect(Self.nalUnits(stream.accessUnits).contains(unit)) }
    }

    @Test func lossInsideAnFUADropsThatAccessUnitOnly() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        // A middle FU-A fragment (neither S nor E) of some access unit past the first.
        let victim = try #require(stream.packets.indices.first { index in
            let packet = stream.packets[index]
            return stream.accessUnitOfPacket[index] > 2 && packet[12] & 0x1F == 28 && packet[13] & 0xC0 == 0
        })
        let lostUnit = stream.accessUnitOfPacket[victim]
        var packets = stream.packets
        packets.remove(at: victim)
        let events = DepacketizedEvents(packets)
        #expect(events.losses.count == 1)
        #expect(events.losses.first?.packetCount == 1)
        #expect(events.losses.first?.firstSequenceNumber == (try RTPHeader.parse(stream.packets[victim])).header.sequenceNumber)
        #expect(events.losses.first?.droppedPartialAccessUnit == true)
        #expect(events.keyframeRequests == 1)
        var expected = Self.nalUnits(stream.accessUnits)
        expected.remove(at: lostUnit)
        #expect(events.nalUnits == expected)
    }

    @Test func lossOfAnAccessUnitsFirstPacketDropsItsRest() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        // The first packet of the first access unit past the third that has more than one.
        let victim = try #require(stream.packets.indices.dropLast().first {
            let owner = stream.accessUnitOfPacket[$0]
            return owner > 3 && stream.accessUnitOfPacket[$0 - 1] == owner - 1 && stream.accessUnitOfPacket[$0 + 1] == owner
        })
        var packets = stream.packets
        packets.remove(at: victim)
        let events = DepacketizedEvents(packets)
        var expected = Self.nalUnits(stream.accessUnits)
        expected.remove(at: stream.accessUnitOfPacket[victim])
        #expect(events.nalUnits == expected)
        #expect(events.losses.map(\.droppedPartialAccessUnit) == [false])
    }

    @Test func aSenderWithoutMarkerBitsIsCutByTheAccessUnitRule() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        let packets = stream.packets.map { packet in
            var copy = packet
            copy[1] &= 0x7F
            return copy
        }
        let events = DepacketizedEvents(packets)
        #expect(events.diagnostics.isEmpty)
        #expect(events.nalUnits == Self.nalUnits(stream.accessUnits))
        #expect(events.accessUnits.allSatisfy { !$0.endedByMarker })
        #expect(events.accessUnits.map(\.timestamp) == Self.timestamps)
    }

    @Test func aStreamStartingMidFUADropsThatAccessUnit() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        let start = try #require(stream.packets.indices.first { stream.packets[$0][12] & 0x1F == 28 && stream.packets[$0][13] & 0x80 == 0 })
        let joined = stream.accessUnitOfPacket[start]
        let events = DepacketizedEvents(Array(stream.packets[start...]))
        #expect(events.diagnostics.map(\.code) == [.missingFragmentStart])
        #expect(events.losses.isEmpty)
        #expect(events.nalUnits == Self.nalUnits(Array(stream.accessUnits[(joined + 1)...])))
    }

    @Test func anFUAWithStartAndEndIsAWholeNALUnit() throws {
        let unit: [UInt8] = [0x65, 0x88, 0x84, 0x21, 0x7F]
        var packet = RTPHeader(marker: true, payloadType: 96, sequenceNumber: 1, timestamp: 9, ssrc: 3).bytes
        packet += [0x60 | 28, 0xC0 | 5] + unit.dropFirst()
        let events = DepacketizedEvents([packet])
        #expect(events.diagnostics.isEmpty)
        #expect(events.nalUnits.map { $0.map(Array.init) } == [[unit]])
    }

    @Test(arguments: [(UInt8(25), "STAP-B"), (26, "MTAP16"), (27, "MTAP24"), (29, "FU-B"), (0, "undefined"), (30, "undefined"), (31, "undefined")])
    func interleavedAndUndefinedTypesAreUnsupported(type: UInt8, name: String) {
        var packet = RTPHeader(marker: true, payloadType: 96, sequenceNumber: 1, timestamp: 9, ssrc: 3).bytes
        packet += [0x60 | type, 0, 0, 0, 4, 0x65, 1, 2, 3]
        let events = DepacketizedEvents([packet])
        #expect(events.accessUnits.isEmpty)
        #expect(events.diagnostics.map(\.code) == [.unsupported])
        #expect(events.diagnostics.first?.message.contains(name) == true)
    }

    @Test func extensionsCSRCsAndPaddingAreSkipped() throws {
        let unit: [UInt8] = [0x65, 0x88, 0x84, 0x21]
        // V=2 P=1 X=1 CC=2, then 2 CSRCs, a 1-word extension, the NAL unit and 3 bytes of padding.
        var packet: [UInt8] = [0xB2, 0x80 | 96, 0, 1, 0, 0, 0, 9, 0, 0, 0, 3]
        packet += [0, 0, 0, 1, 0, 0, 0, 2] + [0xBE, 0xDE, 0, 1, 1, 2, 3, 4] + unit + [0, 0, 3]
        let (header, payload) = try RTPHeader.parse(packet)
        #expect(header.csrcCount == 2 && header.hadExtension && header.paddingCount == 3 && header.marker)
        #expect(Array(packet[payload]) == unit)
        #expect(DepacketizedEvents([packet]).nalUnits.map { $0.map(Array.init) } == [[unit]])
    }

    static let malformedHeaders: [MalformedCase] = [
        MalformedCase("11-byte packet", .truncated, field: "rtp_header") { _ = try RTPHeader.parse([UInt8](repeating: 0x80, count: 11)) },
        MalformedCase("RTP version 1", .valueOutOfRange, field: "V") { _ = try RTPHeader.parse([0x40] + [UInt8](repeating: 0, count: 13)) },
        MalformedCase("CSRC count past the end", .truncated, field: "CSRC") { _ = try RTPHeader.parse([0x83] + [UInt8](repeating: 0, count: 15)) },
        MalformedCase("extension past the end", .truncated, field: "header_extension") {
            _ = try RTPHeader.parse([0x90] + [UInt8](repeating: 0, count: 11) + [0xBE, 0xDE, 0, 2, 1, 2, 3, 4])
        },
        MalformedCase("padding larger than the payload", .valueOutOfRange, field: "P") {
            _ = try RTPHeader.parse([0xA0] + [UInt8](repeating: 0, count: 11) + [0x41, 9])
        },
        MalformedCase("zero padding count", .valueOutOfRange, field: "P") {
            _ = try RTPHeader.parse([0xA0] + [UInt8](repeating: 0, count: 11) + [0x41, 0])
        },
    ]

    @Test(arguments: malformedHeaders) func malformedHeader(_ malformed: MalformedCase) {
        malformed.expectRejected()
    }

    @Test func damagedSTAPAIsDroppedWhole() {
        var packet = RTPHeader(marker: true, payloadType: 96, sequenceNumber: 1, timestamp: 9, ssrc: 3).bytes
        packet += [24, 0, 2, 0x67, 0x42, 0, 9, 0x68]
        let events = DepacketizedEvents([packet])
        #expect(events.nalUnits.isEmpty)
        #expect(events.diagnostics.map(\.code) == [.lengthPastEnd])
        #expect(events.diagnostics.first?.field == "NALU size")
    }

    @Test func latePacketsAndDuplicatesAreReportedAndDropped() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        var packets = Array(stream.packets.prefix(20))
        packets.insert(packets[3], at: 10)
        let events = DepacketizedEvents(packets)
        #expect(events.diagnostics.map(\.code) == [.latePacket])
        let direct = DepacketizedEvents(Array(stream.packets.prefix(20)))
        #expect(events.nalUnits == direct.nalUnits)
    }

    /// Seeded random loss and reordering: whatever is lost, every access unit handed out is one
    /// of the sender's, whole, in order; every lost packet is reported exactly once.
    @Test(arguments: [1 as UInt64, 2, 3, 4, 5, 6, 7, 8])
    func seededRandomLoss(seed: UInt64) throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration(mtu: 800))
        var generator = SplitMix64(seed: seed)
        var kept: [[UInt8]] = []
        var lostIndices: [Int] = []
        for (index, packet) in stream.packets.enumerated() {
            if Int.random(in: 0..<100, using: &generator) < 4 { lostIndices.append(index) } else { kept.append(packet) }
        }
        // Packets lost before the first received one or after the last cannot be noticed.
        let firstKept = lostIndices.first == 0 ? (0...).first { !lostIndices.contains($0) }! : 0
        let lastKept = (0..<stream.packets.count).last { !lostIndices.contains($0) }!
        let lost = lostIndices.filter { $0 > firstKept && $0 < lastKept }.count
        for index in stride(from: 1, to: kept.count - 3, by: 1) where Int.random(in: 0..<100, using: &generator) < 5 {
            kept.swapAt(index, index + Int.random(in: 1...3, using: &generator))
        }
        let events = DepacketizedEvents(kept, configuration: .init(reorderWindow: 4))
        #expect(lost > 0)
        // A packet moved further than the window is lost too, and reported late when it comes.
        let late = events.diagnostics.filter { $0.code == .latePacket }.count
        #expect(events.losses.map(\.packetCount).reduce(0, +) == lost + late)
        #expect(events.keyframeRequests == events.losses.count)
        // In order and whole: the delivered access units are a subsequence of the sent ones.
        let sent = Self.nalUnits(stream.accessUnits)
        var position = 0
        for unit in events.nalUnits {
            guard let found = sent[position...].firstIndex(of: unit) else {
                Issue.record("seed \(seed): an access unit that was never sent, or out of order")
                break
            }
            position = found + 1
        }
        // Access units none of whose packets was lost come out.
        let keptSet = Set(kept)
        let untouched = stream.accessUnits.indices.filter { index in
            stream.packets.indices.allSatisfy { stream.accessUnitOfPacket[$0] != index || keptSet.contains(stream.packets[$0]) }
        }
        #expect(events.accessUnits.count >= untouched.count - 2 * events.losses.count)
        #expect(events.accessUnits.count <= untouched.count)
    }
}

extension RTPDepacketizerTests {
    @Test func anAccessUnitPastTheSizeLimitIsDropped() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        let limit = 2000
        let events = DepacketizedEvents(stream.packets, configuration: .init(maximumAccessUnitSize: limit))
        let small = stream.accessUnits.filter { $0.data.count <= limit }
        #expect(small.count < stream.accessUnits.count, "some access units are larger than the limit")
        #expect(events.nalUnits == Self.nalUnits(small))
        #expect(events.diagnostics.count == stream.accessUnits.count - small.count)
        #expect(events.diagnostics.allSatisfy { $0.code == .overflow })
    }
}
