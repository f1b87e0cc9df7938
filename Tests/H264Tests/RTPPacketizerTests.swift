import H264
import H264TestSupport
import Testing
import RTP

@Suite("RTP packetizer", .ownThread)
struct RTPPacketizerTests {
    /// A NAL unit of `count` bytes: a non-IDR slice header byte (NRI 2), then counting bytes.
    static func slice(_ count: Int, header: UInt8 = 0x41) -> [UInt8] {
        [header] + (1..<count).map { UInt8(truncatingIfNeeded: $0 | 1) }
    }

    @Test func payloadLimitCountsIPUDPAndRTPHeaders() {
        #expect(rtpConfiguration(mtu: 1200).payloadLimit == 1200 - 20 - 8 - 12)
        var v6 = rtpConfiguration(mtu: 1500)
        v6.ipHeaderSize = 40
        #expect(v6.payloadLimit == 1500 - 40 - 8 - 12)
    }

    @Test(arguments: [RTPPacketizer.PacketizationMode.singleNALUnit, .nonInterleaved])
    func nalUnitExactlyAtTheMTUIsOnePacketOfMTUSize(mode: RTPPacketizer.PacketizationMode) throws {
        let configuration = rtpConfiguration(mtu: 1200, mode: mode)
        var packetizer = RTPPacketizer(configuration: configuration)
        let unit = Self.slice(configuration.payloadLimit)
        let packets = try packetizer.packets(avcc: avccData([unit]), presentationTime: .zero)
        #expect(packets.count == 1)
        #expect(packets[0].count + 20 + 8 == 1200)
        #expect(Array(packets[0].dropFirst(12)) == unit)
        #expect(packets[0][1] & 0x80 != 0, "marker on the only packet")
    }

    @Test func oneBytePastTheMTUIsTwoNearEqualFUAFragments() throws {
        let configuration = rtpConfiguration(mtu: 1200)
        var packetizer = RTPPacketizer(configuration: configuration)
        let unit = Self.slice(configuration.payloadLimit + 1)
        let packets = try packetizer.packets(avcc: avccData([unit]), presentationTime: .zero)
        #expect(packets.count == 2)
        for packet in packets { #expect(packet.count + 28 <= 1200) }
        // FU indicator: F and NRI of the NAL unit, type 28; FU header: S/E and the NAL unit's type.
        #expect(packets.map { $0[12] } == [0x40 | 28, 0x40 | 28])
        #expect(packets.map { $0[13] } == [0x80 | 1, 0x40 | 1])
        // 1,160 payload bytes after the NAL header byte: 580 + 580.
        #expect(packets.map { $0.count - 14 } == [580, 580])
        #expect(packets.map { $0[1] & 0x80 } == [0, 0x80])
        #expect([unit[0]] + packets.flatMap { $0.dropFirst(14) } == unit)
    }

    @Test func fragmentsDifferByAtMostOneByte() throws {
        for size in [1161, 2000, 3481, 10_000] {
            var packetizer = RTPPacketizer(configuration: rtpConfiguration(mtu: 1200))
            let packets = try packetizer.packets(avcc: avccData([Self.slice(size)]), presentationTime: .zero)
            let sizes = packets.map { $0.count - 14 }
            #expect(sizes.reduce(0, +) == size - 1)
            #expect(sizes.max()! - sizes.min()! <= 1, "\(size): \(sizes)")
            #expect(packets.count == (size - 1 + 1157) / 1158)
        }
    }

    @Test func modeZeroRefusesAnOversizedNALUnitAndEmitsNothing() throws {
        let configuration = rtpConfiguration(mtu: 1200, mode: .singleNALUnit)
        var packetizer = RTPPacketizer(configuration: configuration)
        var emitted = 0
        #expect(throws: MediaError.self) {
            try packetizer.packetize(avcc: avccData([Self.slice(10), Self.slice(configuration.payloadLimit + 1)]),
                                     presentationTime: .zero) { _ in emitted += 1 }
        }
        do {
            _ = try packetizer.packets(avcc: avccData([Self.slice(configuration.payloadLimit + 1)]), presentationTime: .zero)
        } catch {
            #expect(error.code == .nalUnitTooLarge)
            #expect(error.message.contains("slices"))
        }
        #expect(emitted == 0)
        #expect(packetizer.packetCount == 0)
    }

    @Test func smallUnitsAggregateIntoSTAPAWithTheLargestNRI() throws {
        var packetizer = RTPPacketizer(configuration: rtpConfiguration())
        let units = [Self.slice(5, header: 0x06), Self.slice(7, header: 0x61), Self.slice(9, header: 0x21)]
        let packets = try packetizer.packets(avcc: avccData(units), presentationTime: .zero)
        #expect(packets.count == 1)
        #expect(packets[0][12] == 0x60 | 24)
        var expected: [UInt8] = []
        for unit in units { expected += [0, UInt8(unit.count)] + unit }
        #expect(Array(packets[0].dropFirst(13)) == expected)
        // Mode 0 never aggregates.
        var single = RTPPacketizer(configuration: rtpConfiguration(mode: .singleNALUnit))
        #expect(try single.packets(avcc: avccData(units), presentationTime: .zero).count == 3)
    }

    @Test func aggregationStopsAtTheLimit() throws {
        let configuration = rtpConfiguration(mtu: 1200)
        var packetizer = RTPPacketizer(configuration: configuration)
        // 1 + (2 + 578) × 2 = 1161 > 1160: the two do not fit one STAP-A.
        let packets = try packetizer.packets(avcc: avccData([Self.slice(578), Self.slice(578)]), presentationTime: .zero)
        #expect(packets.map { $0[12] & 0x1F } == [1, 1])
        var fits = RTPPacketizer(configuration: configuration)
        let one = try fits.packets(avcc: avccData([Self.slice(577), Self.slice(578)]), presentationTime: .zero)
        #expect(one.count == 1 && one[0].count == 1200 - 28)
    }

    @Test func headersTimestampsSequenceNumbersAndMarkers() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        var previous: RTPHeader?
        for (index, packet) in stream.packets.enumerated() {
            let (header, _) = try RTPHeader.parse(packet)
            let owner = stream.accessUnitOfPacket[index]
            #expect(packet.count <= 1200 - 28)
            #expect(header.payloadType == 96 && header.ssrc == 0x1234_5678)
            // 40 ms per access unit = 3,600 ticks, from 4,294,960,000 (wrapping).
            #expect(header.timestamp == 4_294_960_000 &+ UInt32(3600 * owner))
            let isLast = index == stream.packets.count - 1 || stream.accessUnitOfPacket[index + 1] != owner
            #expect(header.marker == isLast)
            if let previous { #expect(header.sequenceNumber == previous.sequenceNumber &+ 1) }
            previous = header
        }
        #expect(try RTPHeader.parse(stream.packets[0]).header.sequenceNumber == 65_530)
    }

    @Test func timestampsAreNinetyKilohertz() {
        let packetizer = RTPPacketizer(configuration: rtpConfiguration())
        let base = rtpConfiguration().initialTimestamp
        #expect(packetizer.timestamp(for: .seconds(1)) == base &+ 90_000)
        #expect(packetizer.timestamp(for: .seconds(1) / 30) == base &+ 3000)
        #expect(packetizer.timestamp(for: .seconds(1001) / 30_000) == base &+ 3003)
        #expect(packetizer.timestamp(for: .zero - .seconds(1)) == base &- 90_000)
    }

    static func parameterSets() throws -> (sps: [UInt8], pps: [UInt8], idr: [UInt8], format: FormatDescription) {
        let units = nalUnitBytes(try TestFixtures.data("conformance/MIDR_MW_D.264"))
        let sps = units.first { $0[0] & 0x1F == 7 }!, pps = units.first { $0[0] & 0x1F == 8 }!
        let idr = units.first { $0[0] & 0x1F == 5 }!
        return (sps, pps, idr, try FormatDescription(sequenceParameterSets: [sps], pictureParameterSets: [pps]))
    }

    @Test func parameterSetsGoBeforeEveryIDRAsOneSTAPA() throws {
        let (sps, pps, idr, format) = try Self.parameterSets()
        var packetizer = RTPPacketizer(configuration: rtpConfiguration())
        for _ in 0..<2 {
            let packets = try packetizer.packets(avcc: avccData([idr]), presentationTime: .zero, formatDescription: format)
            #expect(packets[0][12] & 0x1F == 24)
            #expect(Array(packets[0].dropFirst(13)) == [0, UInt8(sps.count)] + sps + [0, UInt8(pps.count)] + pps)
            #expect(packets[0][1] & 0x80 == 0, "no marker before the picture")
            let events = DepacketizedEvents(packets)
            #expect(events.nalUnits.map { $0.map(Array.init) } == [[sps, pps, idr]])
        }
        // Not before a non-IDR picture, nor when the access unit carries its own.
        let slice = Self.slice(100)
        #expect(try packetizer.packets(avcc: avccData([slice]), presentationTime: .zero, formatDescription: format).count == 1)
        let inBand = try packetizer.packets(avcc: avccData([sps, pps, idr]), presentationTime: .zero, formatDescription: format)
        #expect(DepacketizedEvents(inBand).nalUnits.map { $0.map(Array.init) } == [[sps, pps, idr]])
    }

    @Test func parameterSetsLargerThanOnePacketAreFragmentedNotDropped() throws {
        let (sps, pps, idr, _) = try Self.parameterSets()
        // The SPS with 2,000 trailing bytes (cabac_zero_words-like padding): still one NAL unit.
        let bigSPS = sps + [UInt8](repeating: 0x80, count: 2000)
        let format = try FormatDescription(sequenceParameterSets: [bigSPS], pictureParameterSets: [pps])
        var packetizer = RTPPacketizer(configuration: rtpConfiguration())
        let packets = try packetizer.packets(avcc: avccData([idr]), presentationTime: .zero, formatDescription: format)
        #expect(packets[0][12] & 0x1F == 28 && packets[0][13] == 0x80 | 7)
        let events = DepacketizedEvents(packets)
        #expect(events.diagnostics.isEmpty)
        #expect(events.nalUnits.map { $0.map(Array.init) } == [[bigSPS, pps, idr]])
        // Mode 0 cannot send it: an error, not a silent drop.
        var single = RTPPacketizer(configuration: rtpConfiguration(mode: .singleNALUnit))
        #expect(throws: MediaError.self) {
            try single.packets(avcc: avccData([idr].map { Array($0.prefix(100)) }), presentationTime: .zero, formatDescription: format)
        }
    }

    @Test func zeroCopyPayloadPointsIntoTheAccessUnit() throws {
        var packetizer = RTPPacketizer(configuration: rtpConfiguration())
        let data = avccData([Self.slice(5000)])
        var inside = 0, packets = 0
        try data.withUnsafeBytes { buffer in
            try packetizer.packetize(avcc: buffer, presentationTime: .zero) { packet in
                packets += 1
                if let base = packet.payload.baseAddress, base >= buffer.baseAddress!, base + packet.payload.count <= buffer.baseAddress! + buffer.count {
                    inside += 1
                }
                #expect(packet.prefix.count == 14)
            }
        }
        #expect(packets == 5 && inside == 5)
    }

    @Test func tooSmallAnMTUIsAnError() {
        var packetizer = RTPPacketizer(configuration: rtpConfiguration(mtu: 42))
        #expect(throws: MediaError.self) { try packetizer.packets(avcc: avccData([Self.slice(10)]), presentationTime: .zero) }
    }
}

extension RTPPacketizerTests {
    @Test(arguments: [UInt8(0), 24, 28, 31])
    func nalUnitTypesRTPUsesItselfAreRefused(type: UInt8) {
        var packetizer = RTPPacketizer(configuration: rtpConfiguration())
        do {
            _ = try packetizer.packets(avcc: avccData([[0x60 | type, 1, 2, 3]]), presentationTime: .zero)
            Issue.record("type \(type) accepted")
        } catch {
            #expect(error.code == .unsupported && error.field == "nal_unit_type")
        }
    }
}
