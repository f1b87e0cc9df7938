import H264
import HEVC
import H264TestSupport
import RTP

/// What the HEVC RTP tests share: a shared stream cut into access units and packetized, and the
/// depacketizer's events sorted by kind.
struct HEVCPacketizedStream {
    let accessUnits: [HEVCAccessUnit]
    let packets: [[UInt8]]
    /// For each packet, the index of the access unit it carries.
    let accessUnitOfPacket: [Int]

    init(_ stream: String, mtu: Int = 400, stepMilliseconds: Int = 40) throws {
        accessUnits = HEVCAccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("hevc/\(stream)"))
        var packetizer = HEVCRTPPacketizer(configuration: hevcRTPConfiguration(mtu: mtu))
        var packets: [[UInt8]] = [], owners: [Int] = []
        for (index, unit) in accessUnits.enumerated() {
            let made = try packetizer.packets(hvcc: unit.data, presentationTime: .milliseconds(stepMilliseconds * index))
            packets += made
            owners += Array(repeating: index, count: made.count)
        }
        self.packets = packets
        accessUnitOfPacket = owners
    }

    /// The NAL units of each access unit.
    var nalUnits: [[ArraySlice<UInt8>]] { accessUnits.map(\.nalUnits) }
}

/// A fixed configuration, so that sequence numbers (wrapping soon) and timestamps are known.
func hevcRTPConfiguration(mtu: Int = 400) -> RTPPacketizer.Configuration {
    RTPPacketizer.Configuration(maximumTransmissionUnit: mtu, ssrc: 0x1234_5678, initialSequenceNumber: 65_500,
                                initialTimestamp: 4_294_960_000)
}

/// Everything an `HEVCRTPDepacketizer` reports for some packets, in order, and by kind.
struct HEVCDepacketized {
    var events: [HEVCRTPDepacketizer.Event] = []
    var droppedAccessUnitCount = 0

    init(_ packets: [[UInt8]], maximumDONDifference: Int = 0, parameterSets: HEVCParameterSetCache = HEVCParameterSetCache()) {
        var depacketizer = HEVCRTPDepacketizer(parameterSets: parameterSets, maximumDONDifference: maximumDONDifference)
        for packet in packets {
            depacketizer.append(packet: packet)
            while let event = depacketizer.next() { events.append(event) }
        }
        depacketizer.finish()
        while let event = depacketizer.next() { events.append(event) }
        droppedAccessUnitCount = depacketizer.droppedAccessUnitCount
    }

    var accessUnits: [HEVCRTPDepacketizer.ReceivedAccessUnit] {
        events.compactMap { if case .accessUnit(let unit) = $0 { unit } else { nil } }
    }
    var losses: [RTPDepacketizer.Loss] { events.compactMap { if case .loss(let loss) = $0 { loss } else { nil } } }
    var diagnostics: [MediaError] { events.compactMap { if case .diagnostic(let error) = $0 { error } else { nil } } }
    var keyframeRequests: Int { events.count { if case .keyframeRequest = $0 { true } else { false } } }

    /// The NAL units of each access unit handed out.
    var nalUnits: [[ArraySlice<UInt8>]] { accessUnits.map { $0.accessUnit.nalUnits } }
}

/// An RTP packet (version 2, payload type 96, SSRC 1) around `payload`.
func rtpPacket(_ sequenceNumber: UInt16, timestamp: UInt32 = 0, marker: Bool = false, _ payload: [UInt8]) -> [UInt8] {
    RTPHeader(marker: marker, payloadType: 96, sequenceNumber: sequenceNumber, timestamp: timestamp, ssrc: 1).bytes + payload
}
