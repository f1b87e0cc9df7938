import H264
import RTP
import RTSPMessages

/// The RTP depacketizers, the SDP reader and the RTSP message reader (H264).
extension FuzzTarget {
    static func rtp(_ bytes: [UInt8]) {
        // 1. Arbitrary packets, reorder window from the first byte.
        let configuration = RTPDepacketizer.Configuration(reorderWindow: Int(bytes.first ?? 0) % 8)
        var depacketizer = RTPDepacketizer(configuration: configuration)
        var twin = RTPZeroCopyDepacketizer(configuration: configuration)
        var position = 1
        var events = 0
        func drain() {
            while let event = depacketizer.next() {
                events += 1
                let other = twin.next()
                switch (event, other) {
                case (.accessUnit(let unit), .accessUnit(let view)?):
                    check(unit.accessUnit.nalUnits.count == unit.accessUnit.nalUnitTypes.count, "access unit with broken AVCC")
                    check(view.accessUnit.accessUnit == unit.accessUnit && view.timestamp == unit.timestamp
                          && view.accessUnit.encodedByteCount == unit.accessUnit.data.count, "zero-copy access unit differs")
                case (.loss(let loss), .loss(let twinLoss)?): check(loss == twinLoss, "zero-copy loss differs")
                case (.keyframeRequest, .keyframeRequest?): break
                case (.diagnostic(let error), .diagnostic(let twinError)?): check(error == twinError, "zero-copy diagnostic differs")
                default: check(false, "zero-copy depacketizer gave another event")
                }
            }
            if case .some = twin.next() { check(false, "zero-copy depacketizer gave more events") }
        }
        while position + 2 <= bytes.count {
            let length = min(Int(bytes[position]) << 8 | Int(bytes[position + 1]), bytes.count - position - 2)
            depacketizer.append(packet: Array(bytes[(position + 2)..<(position + 2 + length)]))
            twin.append(packet: (position + 2)..<(position + 2 + length), in: bytes)
            drain()
            position += 2 + length
        }
        depacketizer.finish()
        twin.finish()
        drain()
        check(depacketizer.lostPacketCount >= 0, "negative loss")

        // 2. The input as Annex-B, through the packetizer and back.
        let units = AccessUnitAssembler.accessUnits(inAnnexB: bytes)
        let mtu = 20 + 8 + 12 + 3 + Int(bytes.first ?? 0) * 4
        var packetizer = RTPPacketizer(configuration: .init(maximumTransmissionUnit: mtu, ssrc: 7, initialSequenceNumber: 65_000, initialTimestamp: 0))
        var receiver = RTPDepacketizer()
        var sent: [ArraySlice<UInt8>] = []
        var received: [ArraySlice<UInt8>] = []
        for (index, unit) in units.enumerated() {
            let packets: [[UInt8]]
            do {
                packets = try packetizer.packets(avcc: unit.data, presentationTime: .milliseconds(index))
            } catch {
                // Types 0 and 24–31 cannot travel in RTP; nothing else may be refused.
                check(error.code == .unsupported, "packetizer refused an assembled access unit: \(error)")
                return
            }
            for packet in packets {
                check(packet.count + 28 <= mtu, "a packet of \(packet.count) bytes over an MTU of \(mtu)")
                receiver.append(packet: packet)
            }
            sent += unit.nalUnits
        }
        receiver.finish()
        while let event = receiver.next() {
            switch event {
            case .accessUnit(let unit): received += unit.accessUnit.nalUnits
            default: break
            }
        }
        // Units with forbidden_zero_bit set are dropped by the assembler on both sides.
        check(received == sent.filter { $0.first! & 0x80 == 0 }, "packetize → depacketize changed the NAL units")
    }

    static func sdp(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        if var description = try? SessionDescription(parsing: text) {
            // What was tolerated is not written back: the text it writes reads without warnings.
            var again = try? SessionDescription(parsing: description.text)
            check(again?.warnings == [], "SDP text written here reads with warnings: \(again?.warnings ?? [])")
            description.warnings = []
            // The audio section's own warnings (an unreadable config) are written back as they came.
            description.audio?.warnings = []
            again?.audio?.warnings = []
            check(again == description, "SDP does not survive its own text: \(description)")
            _ = try? description.formatDescription()
        }
        if let decoded = try? Base64.decode(text) {
            check((try? Base64.decode(Base64.encode(decoded))) == decoded, "base64 round trip")
        }
    }

    static func rtsp(_ bytes: [UInt8]) {
        // The first byte's low bit picks a server's reader or a client's (which skips junk).
        let resynchronizing = (bytes.first ?? 0) & 1 == 1
        func read(chunk: Int) -> (messages: [RTSPMessageReader.Message], error: MediaError?) {
            var reader = RTSPMessageReader(limits: .init(maximumRequestLineSize: 256, maximumHeaderSize: 1024, maximumBodySize: 512),
                                           resynchronizing: resynchronizing)
            var messages: [RTSPMessageReader.Message] = []
            var offset = 0
            while offset < bytes.count {
                let end = offset + min(chunk, bytes.count - offset)
                reader.append(bytes[offset..<end])
                offset = end
                do {
                    while let message = try reader.next() { messages.append(message) }
                } catch {
                    check(reader.hasFailed, "a thrown reader must stay failed")
                    _ = RTSPStatus(for: error)
                    return (messages, error)
                }
            }
            return (messages, nil)
        }
        let whole = read(chunk: .max)
        let chunked = read(chunk: 1 + Int(bytes.first ?? 0) % 17)
        check(whole.messages == chunked.messages && whole.error?.code == chunked.error?.code, "chunking changed the messages")
        for case .response(let response) in whole.messages {
            check(response.header("Content-Length").flatMap { Int($0) } ?? 0 == response.body.count, "a response body of the wrong length")
        }
        for case .request(let request) in whole.messages {
            var again = RTSPMessageReader(limits: .init(maximumRequestLineSize: 4096, maximumHeaderSize: 8192, maximumBodySize: 512))
            again.append(request.bytes)
            check((try? again.next()) == .request(request), "a request does not read back from its own bytes")
            if let transport = request.header("Transport") {
                do {
                    for spec in try RTSPTransport.parseList(transport) {
                        check((try? RTSPTransport(parsing: spec.text)) == spec, "a transport does not read back")
                    }
                } catch {
                    check(error.code == .invalidTransport, "Transport threw \(error)")
                }
            }
        }
    }
}
