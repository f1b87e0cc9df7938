public import MediaCore
// The payload structures other than fragmentation units, for RTPDepacketizerCore: aggregation
// packets (RFC 6184's STAP-A, RFC 7798's AP with its DONL/DOND), a payload that begins with a
// start code, and the reports for empty and unsupported payloads.

extension RTPDepacketizerCore {
    @inline(never)
    package mutating func reportEmptyPayload(_ header: RTPHeader) {
        report(MediaError(.emptyNALUnit, field: "RTP payload", byteOffset: RTPHeader.fixedSize, "packet \(header.sequenceNumber) has no payload"))
    }

    @inline(never)
    package mutating func reportShortPayload(_ count: Int, _ header: RTPHeader) {
        report(MediaError(.truncated, field: "payload header", byteOffset: RTPHeader.fixedSize,
                         "packet \(header.sequenceNumber) has \(count) payload byte(s), fewer than its \(Format.nalHeaderSize)-byte payload header; dropped"))
    }

    @inline(never)
    package mutating func reportUnsupported(type: UInt8, _ header: RTPHeader) {
        report(MediaError(.unsupported, field: "nal_unit_type", byteOffset: 0,
                         "\(Format.unsupportedReason(type: type)); packet \(header.sequenceNumber) dropped"))
    }

    /// A payload that begins with a start code (V380 cameras send them; FFmpeg passes them to
    /// its Annex-B splitter): its NAL units, split by the one rule for Annex-B where it does not
    /// belong, each delivered as a single NAL unit packet's would be. Warned about once per
    /// depacketizer; damaged units there are reported and skipped.
    @inline(never)
    package mutating func annexBPayload(_ payload: UnsafeRawBufferPointer, _ header: RTPHeader) {
        if !warnedAnnexBPayload {
            warnedAnnexBPayload = true
            report(EmbeddedAnnexB.warning(byteOffset: 0, expected: "nal_unit_type",
                                          "NAL unit header (packet \(header.sequenceNumber), and any later one)"))
        }
        var units: [Range<Int>] = []
        EmbeddedAnnexB.forEachNALUnit(in: payload, from: 0, { units.append($0) }, damaged: { report($0) })
        for range in units { deliver(UnsafeRawBufferPointer(rebasing: payload[range]), header) }
    }

    /// A single NAL unit packet with a DONL after its payload header (RFC 7798 section 4.4.1):
    /// the NAL unit is the header and what follows the DONL, gathered.
    @inline(never)
    package mutating func singleWithDecodingOrderNumber(_ payload: UnsafeRawBufferPointer, _ header: RTPHeader) {
        let size = Format.nalHeaderSize
        guard payload.count > size + 2 else {
            report(MediaError(.truncated, field: "DONL", byteOffset: size,
                             "single NAL unit packet \(header.sequenceNumber) of \(payload.count) bytes has no room for its DONL and payload; packet dropped"))
            return
        }
        fragment.removeAll(keepingCapacity: true)
        fragment.append(contentsOf: payload[0..<size])
        fragment.append(contentsOf: payload[(size + 2)...])
        let nalUnit = fragment
        nalUnit.withUnsafeBytes { deliver($0, header) }
    }

    /// The size field of each unit of an aggregation packet: where its size lies, after the
    /// decoding order number that precedes it (RFC 7798: a 2-byte DONL before the first, a
    /// 1-byte DOND before the others, when ``decodingOrderNumbers``).
    private func sizeOffset(at position: Int, first: Bool) -> Int {
        guard decodingOrderNumbers else { return position }
        return position + (first ? 2 : 1)
    }

    package mutating func aggregation(_ payload: UnsafeRawBufferPointer, _ header: RTPHeader) {
        // Check every size first: a damaged aggregation packet is dropped whole.
        let name = Format.aggregationName
        let start = Format.nalHeaderSize
        var position = start
        var count = 0
        while position < payload.count {
            let sizeAt = sizeOffset(at: position, first: count == 0)
            guard payload.count - sizeAt >= 2 else {
                report(MediaError(.truncated, field: sizeAt == position ? "NALU size" : "DONL", byteOffset: position,
                                 "\(name) in packet \(header.sequenceNumber) ends inside a size field; packet dropped"))
                return
            }
            let size = Int(payload[sizeAt]) << 8 | Int(payload[sizeAt + 1])
            guard size > 0, size <= payload.count - sizeAt - 2 else {
                report(MediaError(size == 0 ? .emptyNALUnit : .lengthPastEnd, field: "NALU size", byteOffset: sizeAt,
                                 "\(name) unit of \(size) bytes with \(payload.count - sizeAt - 2) left in packet \(header.sequenceNumber); packet dropped"))
                return
            }
            position = sizeAt + 2 + size
            count += 1
        }
        if count == 0 {
            report(MediaError(.emptyNALUnit, field: "NALU size", byteOffset: start, "\(name) without NAL units in packet \(header.sequenceNumber)"))
            return
        }
        position = start
        for index in 0..<count {
            let sizeAt = sizeOffset(at: position, first: index == 0)
            let size = Int(payload[sizeAt]) << 8 | Int(payload[sizeAt + 1])
            deliver(UnsafeRawBufferPointer(rebasing: payload[(sizeAt + 2)..<(sizeAt + 2 + size)]), header)
            position = sizeAt + 2 + size
        }
    }
}

// The reports of a fragmentation unit too short for its headers, and of a fragmented NAL unit
// that grew past the access-unit limit.
extension RTPDepacketizerCore {
    @inline(never)
    package mutating func reportShortFragment(_ count: Int, _ header: RTPHeader) {
        report(MediaError(.truncated, field: "FU header", byteOffset: 0,
                         "\(Format.fragmentName) of \(count) bytes in packet \(header.sequenceNumber); packet dropped"))
    }

    @inline(never)
    package mutating func dropOversizedFragment(_ header: RTPHeader) {
        report(MediaError(.overflow, field: "FU header",
                         "a fragmented NAL unit passed \(configuration.maximumAccessUnitSize) bytes at packet \(header.sequenceNumber): its access unit is dropped"))
        dropPending()
        discarding = true
        discardTimestamp = header.timestamp
        discardCounted = true
    }
}
