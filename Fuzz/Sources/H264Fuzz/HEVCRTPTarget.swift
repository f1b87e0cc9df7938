import H264
import HEVC
import RTP

/// An SDP of an H.265 stream without `sprop-…` parameter sets: they come in band.
private let h265Description = SessionDescription(hevcParameterSets: [], address: "127.0.0.1", port: 5004)

/// The input after its first byte as packets, a 2-byte big-endian length before each (the last
/// one cut to what is left).
private func forEachPacket(in bytes: [UInt8], _ body: ([UInt8]) -> Void) {
    var position = 1
    while position + 2 <= bytes.count {
        let length = min(Int(bytes[position]) << 8 | Int(bytes[position + 1]), bytes.count - position - 2)
        body(Array(bytes[(position + 2)..<(position + 2 + length)]))
        position += 2 + length
    }
}

extension FuzzTarget {
    /// `hevc-rtp`: (1) the input as packets (a 2-byte length before each) into
    /// `HEVCRTPDepacketizer`, with and without decoding order numbers and a reorder window from
    /// the first byte: never traps, every access unit is well-formed length-prefixed data with
    /// one type per NAL unit — and the same packets into `VideoRTPDepacketizer` for an `H265`
    /// SDP, whose frames (their `hvcC` built from the parameter sets in band) have well-formed
    /// lengths and an H.265 format; (2) the input as Annex-B cut into access units, through
    /// `HEVCRTPPacketizer` at an MTU from the first byte and back: the same NAL units.
    static func hevcRTP(_ bytes: [UInt8]) {
        for withNumbers in [false, true] {
            let configuration = RTPDepacketizer.Configuration(reorderWindow: Int(bytes.first ?? 0) % 8)
            var depacketizer = HEVCRTPDepacketizer(configuration: configuration, maximumDONDifference: withNumbers ? 1 : 0)
            func drain() {
                while let event = depacketizer.next() {
                    if case .accessUnit(let unit) = event {
                        check(unit.accessUnit.nalUnits.count == unit.accessUnit.nalUnitTypes.count, "access unit with broken lengths")
                    }
                }
            }
            forEachPacket(in: bytes) { packet in
                depacketizer.append(packet: packet)
                drain()
            }
            depacketizer.finish()
            drain()
        }
        guard var video = try? VideoRTPDepacketizer(h265Description) else { return check(false, "an H.265 SDP refused") }
        func drainVideo() {
            while let event = video.next() {
                guard case .frame(let received) = event else { continue }
                check(received.frame.videoFormat?.codec == .hevc, "an H.265 stream gave a frame of another codec")
                check((try? AVCC.nalUnits(in: received.frame.data, lengthSize: 4, allowingEmptyNALUnits: true)) != nil, "frame with broken lengths")
            }
        }
        forEachPacket(in: bytes) { packet in
            video.append(packet: packet)
            drainVideo()
        }
        video.finish()
        drainVideo()

        let units = HEVCAccessUnitAssembler.accessUnits(inAnnexB: bytes)
        let mtu = 20 + 8 + 12 + 4 + Int(bytes.first ?? 0) * 4
        var packetizer = HEVCRTPPacketizer(configuration: .init(maximumTransmissionUnit: mtu, ssrc: 7, initialSequenceNumber: 65_000,
                                                                initialTimestamp: 0))
        var receiver = HEVCRTPDepacketizer()
        var sent: [[UInt8]] = [], received: [[UInt8]] = []
        for (index, unit) in units.enumerated() {
            guard let packets = try? packetizer.packets(hvcc: unit.data, presentationTime: .milliseconds(index)) else { return }
            sent += unit.nalUnits.map(Array.init)
            for packet in packets { receiver.append(packet: packet) }
            while let event = receiver.next() {
                if case .accessUnit(let got) = event { received += got.accessUnit.nalUnits.map(Array.init) }
            }
        }
        receiver.finish()
        while let event = receiver.next() {
            if case .accessUnit(let got) = event { received += got.accessUnit.nalUnits.map(Array.init) }
        }
        check(received == sent, "packetizer round trip lost or changed NAL units")
    }
}
