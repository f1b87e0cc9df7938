public import MediaCore
// Sequence order for RTPDepacketizerCore: packets that arrive early wait in a window, late ones
// are reported, and a gap the window gives up on is a loss (the access unit dropped, a keyframe
// requested).

extension RTPDepacketizerCore {
    /// A packet other than the one expected next: late (reported), or early (kept until the
    /// ones before it arrive or are given up).
    @inline(never)
    package mutating func appendOutOfOrder(packet: UnsafeRawBufferPointer, owner: borrowing [UInt8], header: RTPHeader,
                                           expected expectedNumber: UInt16) {
        let sequenceNumber = header.sequenceNumber
        let distance = Int16(bitPattern: sequenceNumber &- expectedNumber)
        if distance < 0 || waiting.contains(where: { $0.sequenceNumber == sequenceNumber }) {
            report(MediaError(.latePacket, field: "sequence number", byteOffset: 2,
                             "packet \(sequenceNumber) arrived after the depacketizer moved past it (expected \(expectedNumber))"))
            return
        }
        if !owner.isEmpty, let ownerStart = owner.withUnsafeBytes({ $0.baseAddress }), let start = packet.baseAddress {
            let offset = start - ownerStart
            waiting.append((sequenceNumber, copy owner, offset..<(offset + packet.count)))
        } else {
            waiting.append((sequenceNumber, Array(packet.assumingMemoryBound(to: UInt8.self)), 0..<packet.count))
        }
        while waiting.count > configuration.reorderWindow {
            skipToEarliestWaiting()
        }
    }

    package mutating func drainWaiting() {
        while !waiting.isEmpty, let index = waiting.firstIndex(where: { $0.sequenceNumber == expected }) {
            let entry = waiting.remove(at: index)
            expected = entry.sequenceNumber &+ 1
            entry.buffer.withUnsafeBytes { buffer in
                let packet = UnsafeRawBufferPointer(rebasing: buffer[entry.range])
                // Parsed once already when it arrived.
                if let (header, payload) = try? RTPHeader.parse(packet) {
                    storage.usePacket(entry.buffer, bytes: packet)
                    process(header, UnsafeRawBufferPointer(rebasing: packet[payload]))
                }
            }
        }
    }

    package mutating func skipToEarliestWaiting() {
        guard let expectedNumber = expected,
              let earliest = waiting.min(by: { $0.sequenceNumber &- expectedNumber < $1.sequenceNumber &- expectedNumber }) else { return }
        let lost = Int(earliest.sequenceNumber &- expectedNumber)
        lose(firstSequenceNumber: expectedNumber, count: lost)
        expected = earliest.sequenceNumber
        drainWaiting()
    }

    package mutating func lose(firstSequenceNumber: UInt16, count: Int) {
        lostPacketCount += count
        let partial = pendingNALCount > 0 || fragmentInProgress
        events.append(.loss(RTPDepacketizer.Loss(firstSequenceNumber: firstSequenceNumber, packetCount: count, droppedPartialAccessUnit: partial)))
        events.append(.keyframeRequest)
        dropPending()
        discarding = true
        discardTimestamp = nil
        discardCounted = partial
    }
}
