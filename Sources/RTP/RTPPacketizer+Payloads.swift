// The payload structures RTPPacketizer makes — single NAL units, aggregation packets (STAP-A,
// AP) and fragmentation units (FU-A, FU) — for either codec's payload format: one loop, the
// headers from the RTPPayloadFormat.

extension RTPPacketizer {
    /// Sends one access unit's NAL units (`units`, ranges of `base`), after the parameter sets
    /// `parameterSets` (their bytes and ranges) when given, every packet stamped `timestamp`,
    /// the marker bit on the last.
    ///
    /// The caller has checked the NAL units (none of the payload structures' types) and that the
    /// payload limit leaves room for a fragmentation unit's headers and one byte.
    package mutating func emitAccessUnit<Format: RTPPayloadFormat>(
        _ format: Format.Type, _ base: UnsafeRawBufferPointer, _ units: [Range<Int>],
        parameterSets: (bytes: [UInt8], ranges: [Range<Int>])?, timestamp: UInt32, emit: (Packet) -> Void) {
        let limit = configuration.payloadLimit
        let emitsAccessUnit = !units.isEmpty
        // Typed bytes, so that packets' slices may be read as `UInt8` (`Packet.bytes()`, iovecs).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: RTPHeader.fixedSize + Format.nalHeaderSize + 1 + limit) { typed in
            let scratch = UnsafeMutableRawBufferPointer(typed)
            if let parameterSets {
                parameterSets.bytes.withUnsafeBytes { bytes in
                    emitUnits(Format.self, bytes, parameterSets.ranges, timestamp: timestamp, setsMarker: !emitsAccessUnit,
                              limit: limit, scratch: scratch, emit: emit)
                }
            }
            emitUnits(Format.self, base, units, timestamp: timestamp, setsMarker: true, limit: limit, scratch: scratch, emit: emit)
        }
    }

    /// The smallest payload limit a format can send every NAL unit with: its fragmentation
    /// unit's headers and one byte.
    package static func minimumPayloadLimit<Format: RTPPayloadFormat>(_ format: Format.Type) -> Int { Format.nalHeaderSize + 2 }

    private mutating func emitUnits<Format: RTPPayloadFormat>(_ format: Format.Type, _ base: UnsafeRawBufferPointer, _ units: [Range<Int>], timestamp: UInt32, setsMarker: Bool,
                                    limit: Int, scratch: UnsafeMutableRawBufferPointer, emit: (Packet) -> Void) {
        let aggregates = configuration.packetizationMode == .nonInterleaved
        var index = 0
        while index < units.count {
            let unit = units[index]
            let isLastUnit = index == units.count - 1
            if unit.count > limit {
                fragment(Format.self, base, unit, timestamp: timestamp, marker: setsMarker && isLastUnit, limit: limit, scratch: scratch, emit: emit)
                index += 1
                continue
            }
            var end = index + 1
            if aggregates {
                var size = Format.nalHeaderSize + 2 + unit.count
                while end < units.count, size + 2 + units[end].count <= limit {
                    size += 2 + units[end].count
                    end += 1
                }
            }
            if end - index >= 2 {
                aggregate(Format.self, base, units[index..<end], timestamp: timestamp, marker: setsMarker && end == units.count,
                          scratch: scratch, emit: emit)
            } else {
                end = index + 1
                let header = makeHeader(marker: setsMarker && isLastUnit, timestamp: timestamp)
                header.write(to: scratch)
                emit(Packet(header: header, kind: .singleNALUnit,
                            prefix: UnsafeRawBufferPointer(rebasing: scratch[0..<RTPHeader.fixedSize]),
                            payload: UnsafeRawBufferPointer(rebasing: base[unit])))
            }
            index = end
        }
    }

    private mutating func aggregate<Format: RTPPayloadFormat>(_ format: Format.Type, _ base: UnsafeRawBufferPointer, _ units: ArraySlice<Range<Int>>, timestamp: UInt32, marker: Bool,
                                    scratch: UnsafeMutableRawBufferPointer, emit: (Packet) -> Void) {
        let header = makeHeader(marker: marker, timestamp: timestamp)
        header.write(to: scratch)
        let headerEnd = RTPHeader.fixedSize + Format.nalHeaderSize
        var position = headerEnd
        for unit in units {
            scratch[position] = UInt8(truncatingIfNeeded: unit.count >> 8)
            scratch[position + 1] = UInt8(truncatingIfNeeded: unit.count)
            UnsafeMutableRawBufferPointer(rebasing: scratch[(position + 2)..<(position + 2 + unit.count)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: base[unit]))
            position += 2 + unit.count
        }
        let payloadHeader = Format.aggregationHeader(units.lazy.map { UnsafeRawBufferPointer(rebasing: base[$0]) })
        scratch[RTPHeader.fixedSize] = payloadHeader.0
        if Format.nalHeaderSize == 2 { scratch[RTPHeader.fixedSize + 1] = payloadHeader.1 }
        emit(Packet(header: header, kind: .aggregation(count: units.count),
                    prefix: UnsafeRawBufferPointer(rebasing: scratch[0..<headerEnd]),
                    payload: UnsafeRawBufferPointer(rebasing: scratch[headerEnd..<position])))
    }

    private mutating func fragment<Format: RTPPayloadFormat>(_ format: Format.Type, _ base: UnsafeRawBufferPointer, _ unit: Range<Int>, timestamp: UInt32, marker: Bool, limit: Int,
                                   scratch: UnsafeMutableRawBufferPointer, emit: (Packet) -> Void) {
        let headerSize = Format.nalHeaderSize
        let nalHeader = UnsafeRawBufferPointer(rebasing: base[unit.lowerBound..<(unit.lowerBound + headerSize)])
        let payloadCount = unit.count - headerSize
        let capacity = limit - headerSize - 1
        let fragmentCount = (payloadCount + capacity - 1) / capacity
        let baseSize = payloadCount / fragmentCount
        let longer = payloadCount % fragmentCount
        var position = unit.lowerBound + headerSize
        for fragmentIndex in 0..<fragmentCount {
            let size = baseSize + (fragmentIndex < longer ? 1 : 0)
            let start = fragmentIndex == 0, end = fragmentIndex == fragmentCount - 1
            let header = makeHeader(marker: marker && end, timestamp: timestamp)
            header.write(to: scratch)
            let headers = Format.fragmentHeaders(nalHeader: nalHeader)
            scratch[RTPHeader.fixedSize] = headers.payloadHeader.0
            if headerSize == 2 { scratch[RTPHeader.fixedSize + 1] = headers.payloadHeader.1 }
            scratch[RTPHeader.fixedSize + headerSize] = (start ? 0x80 : 0) | (end ? 0x40 : 0) | headers.type
            emit(Packet(header: header, kind: .fragment(start: start, end: end),
                        prefix: UnsafeRawBufferPointer(rebasing: scratch[0..<(RTPHeader.fixedSize + headerSize + 1)]),
                        payload: UnsafeRawBufferPointer(rebasing: base[position..<(position + size)])))
            position += size
        }
    }
}
