import H264
import H264TestSupport
import Testing
import RTP

/// A real stream cut into access units and packetized: what the RTP tests send.
struct PacketizedStream {
    /// The access units of the stream, as the assembler cuts them.
    let accessUnits: [AccessUnit]
    /// The packets of every access unit, in sending order.
    let packets: [[UInt8]]
    /// For each packet, the index of the access unit it carries.
    let accessUnitOfPacket: [Int]

    /// `MIDR_MW_D.264` (several IDRs, NAL units up to 2,376 bytes) by default.
    init(fixture: String = "conformance/MIDR_MW_D.264", configuration: RTPPacketizer.Configuration) throws {
        let bytes = try TestFixtures.data(fixture)
        accessUnits = AccessUnitAssembler.accessUnits(inAnnexB: bytes)
        var packetizer = RTPPacketizer(configuration: configuration)
        var packets: [[UInt8]] = []
        var owners: [Int] = []
        for (index, unit) in accessUnits.enumerated() {
            let made = try packetizer.packets(avcc: unit.data, presentationTime: .milliseconds(40 * index))
            packets += made
            owners += Array(repeating: index, count: made.count)
        }
        self.packets = packets
        self.accessUnitOfPacket = owners
    }
}

/// Everything a depacketizer reports, sorted by kind.
struct DepacketizedEvents {
    var accessUnits: [RTPDepacketizer.ReceivedAccessUnit] = []
    var losses: [RTPDepacketizer.Loss] = []
    var keyframeRequests = 0
    var diagnostics: [MediaError] = []
    /// Every event in order.
    var inOrder: [RTPDepacketizer.Event] = []

    /// Feeds the packets (in the order given), finishes, and collects the events.
    ///
    /// Every test that reads packets this way also checks `RTPZeroCopyDepacketizer` against
    /// `RTPDepacketizer`: fed the same packets, each in its own array and all in one buffer, it
    /// must give the same events in the same order, its access units equal to the AVCC ones.
    init(_ packets: [[UInt8]], configuration: RTPDepacketizer.Configuration = .init(),
         sourceLocation: SourceLocation = #_sourceLocation) {
        var depacketizer = RTPDepacketizer(configuration: configuration)
        for packet in packets {
            depacketizer.append(packet: packet)
            collect(&depacketizer)
        }
        depacketizer.finish()
        collect(&depacketizer)

        let buffer = packets.flatMap { $0 }
        var ranges: [Range<Int>] = []
        for packet in packets { ranges.append((ranges.last?.upperBound ?? 0)..<((ranges.last?.upperBound ?? 0) + packet.count)) }
        for inOneBuffer in [false, true] {
            var twin = RTPZeroCopyDepacketizer(configuration: configuration)
            var events: [RTPDepacketizer.Event] = []
            for index in packets.indices {
                if inOneBuffer { twin.append(packet: ranges[index], in: buffer) } else { twin.append(packet: packets[index]) }
                Self.collect(&twin, into: &events)
            }
            twin.finish()
            Self.collect(&twin, into: &events)
            let same = events == inOrder  // compared apart, so that a failure does not print every byte
            #expect(same, "RTPZeroCopyDepacketizer (\(inOneBuffer ? "one buffer" : "an array per packet")) gave other events",
                    sourceLocation: sourceLocation)
            #expect(twin.packetCount == depacketizer.packetCount && twin.lostPacketCount == depacketizer.lostPacketCount
                    && twin.droppedAccessUnitCount == depacketizer.droppedAccessUnitCount, sourceLocation: sourceLocation)
        }
    }

    private mutating func collect(_ depacketizer: inout RTPDepacketizer) {
        while let event = depacketizer.next() {
            switch event {
            case .accessUnit(let unit): accessUnits.append(unit)
            case .loss(let loss): losses.append(loss)
            case .keyframeRequest: keyframeRequests += 1
            case .diagnostic(let error): diagnostics.append(error)
            }
            inOrder.append(event)
        }
    }

    /// Collects the zero-copy depacketizer's events with each view copied into an AVCC access unit.
    private static func collect(_ depacketizer: inout RTPZeroCopyDepacketizer, into events: inout [RTPDepacketizer.Event]) {
        while let event = depacketizer.next() {
            switch event {
            case .accessUnit(let unit):
                // The view's own size and its AVCC copy must agree.
                let copy = unit.accessUnit.accessUnit
                events.append(copy.data.count == unit.accessUnit.encodedByteCount
                              ? .accessUnit(.init(accessUnit: copy, timestamp: unit.timestamp, endedByMarker: unit.endedByMarker))
                              : .diagnostic(MediaError(.overflow, field: "encodedByteCount", "\(unit.accessUnit.encodedByteCount) ≠ \(copy.data.count)")))
            case .loss(let loss): events.append(.loss(loss))
            case .keyframeRequest: events.append(.keyframeRequest)
            case .diagnostic(let error): events.append(.diagnostic(error))
            }
        }
    }

    /// The NAL units of each access unit handed out.
    var nalUnits: [[ArraySlice<UInt8>]] { accessUnits.map { $0.accessUnit.nalUnits } }
}

/// A fixed configuration, so that sequence numbers and timestamps are known.
func rtpConfiguration(mtu: Int = 1200, mode: RTPPacketizer.PacketizationMode = .nonInterleaved) -> RTPPacketizer.Configuration {
    RTPPacketizer.Configuration(packetizationMode: mode, maximumTransmissionUnit: mtu, ssrc: 0x1234_5678,
                                initialSequenceNumber: 65_530, initialTimestamp: 4_294_960_000)
}

/// An AVCC access unit made of the given NAL units.
func avccData(_ nalUnits: [[UInt8]]) -> [UInt8] {
    (try? AVCC.data(nalUnits: nalUnits)) ?? []
}
