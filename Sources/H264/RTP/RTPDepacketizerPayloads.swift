// The payload structures of RFC 6184 other than FU-A, for RTPDepacketizerCore: STAP-A, a
// payload that begins with a start code, and the reports for empty and unsupported payloads.

extension RTPDepacketizerCore {
    @inline(never)
    mutating func reportEmptyPayload(_ header: RTPHeader) {
        report(H264Error(.emptyNALUnit, field: "RTP payload", byteOffset: RTPHeader.fixedSize, "packet \(header.sequenceNumber) has no payload"))
    }

    @inline(never)
    mutating func reportUnsupported(type: UInt8, _ header: RTPHeader) {
        if [25, 26, 27, 29].contains(type) {
            let names: [UInt8: String] = [25: "STAP-B", 26: "MTAP16", 27: "MTAP24", 29: "FU-B"]
            report(H264Error(.unsupported, field: "nal_unit_type", byteOffset: 0,
                             "\(names[type]!) (type \(type)) belongs to the interleaved packetization-mode 2, which is not supported; packet \(header.sequenceNumber) dropped"))
        } else {
            report(H264Error(.unsupported, field: "nal_unit_type", byteOffset: 0,
                             "payload type \(type) is undefined in RFC 6184; packet \(header.sequenceNumber) dropped"))
        }
    }

    /// A payload that begins with a start code (V380 cameras send them; FFmpeg passes them to
    /// its Annex-B splitter): its NAL units, split by the one rule for Annex-B where it does not
    /// belong, each delivered as a single NAL unit packet's would be. Warned about once per
    /// depacketizer; damaged units there are reported and skipped.
    @inline(never)
    mutating func annexBPayload(_ payload: UnsafeRawBufferPointer, _ header: RTPHeader) {
        if !warnedAnnexBPayload {
            warnedAnnexBPayload = true
            report(EmbeddedAnnexB.warning(byteOffset: 0, expected: "nal_unit_type",
                                          "NAL unit header (packet \(header.sequenceNumber), and any later one)"))
        }
        var units: [Range<Int>] = []
        EmbeddedAnnexB.forEachNALUnit(in: payload, from: 0, { units.append($0) }, damaged: { report($0) })
        for range in units { deliver(UnsafeRawBufferPointer(rebasing: payload[range]), header) }
    }

    mutating func aggregation(_ payload: UnsafeRawBufferPointer, _ header: RTPHeader) {
        // Check every size first: a damaged STAP-A is dropped whole.
        var position = 1
        var count = 0
        while position < payload.count {
            guard payload.count - position >= 2 else {
                report(H264Error(.truncated, field: "NALU size", byteOffset: position,
                                 "STAP-A in packet \(header.sequenceNumber) ends inside a size field; packet dropped"))
                return
            }
            let size = Int(payload[position]) << 8 | Int(payload[position + 1])
            guard size > 0, size <= payload.count - position - 2 else {
                report(H264Error(size == 0 ? .emptyNALUnit : .lengthPastEnd, field: "NALU size", byteOffset: position,
                                 "STAP-A unit of \(size) bytes with \(payload.count - position - 2) left in packet \(header.sequenceNumber); packet dropped"))
                return
            }
            position += 2 + size
            count += 1
        }
        if count == 0 {
            report(H264Error(.emptyNALUnit, field: "NALU size", byteOffset: 1, "STAP-A without NAL units in packet \(header.sequenceNumber)"))
            return
        }
        position = 1
        while position < payload.count {
            let size = Int(payload[position]) << 8 | Int(payload[position + 1])
            deliver(UnsafeRawBufferPointer(rebasing: payload[(position + 2)..<(position + 2 + size)]), header)
            position += 2 + size
        }
    }
}
