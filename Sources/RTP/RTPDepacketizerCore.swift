public import MediaCore
/// Everything ``RTPDepacketizer`` and ``RTPZeroCopyDepacketizer`` do, apart from how the bytes
/// of an access unit are kept (`Storage`): the RTP header, payload type and SSRC checks,
/// sequence order and loss, single NAL unit, aggregation and fragmentation payloads (as the
/// storage's ``RTPPayloadFormat`` lays them out: RFC 6184's STAP-A and FU-A, RFC 7798's AP and
/// FU), and where access units end. See ``RTPDepacketizer`` for the rules.
package struct RTPDepacketizerCore<Storage: RTPAccessUnitStorage>: Sendable {
    package typealias Configuration = RTPDepacketizer.Configuration

    package typealias Event = RTPDepacketizerEvent<Storage.Unit>

    package typealias Format = Storage.Format

    package let configuration: Configuration
    package private(set) var packetCount = 0
    package var lostPacketCount = 0
    package private(set) var droppedAccessUnitCount = 0
    package var parameterSets: Storage.ParameterSets { storage.parameterSets }
    /// True when every NAL unit's payload carries a decoding order number (RFC 7798's DONL
    /// and DOND, present when `sprop-max-don-diff` > 0): they are skipped, the NAL units kept in
    /// transmission order.
    package var decodingOrderNumbers = false

    package var storage: Storage
    package var events: [Event] = []
    private var eventIndex = 0
    private var ssrc: UInt32?
    package var expected: UInt16?
    /// Packets that arrived before one missing: each in a buffer the depacketizer holds (the
    /// caller's own buffer when it gave one, else a copy) and where in it the packet lies.
    package var waiting: [(sequenceNumber: UInt16, buffer: [UInt8], range: Range<Int>)] = []
    /// The fragmented NAL unit in progress when gathered (and scratch for a NAL unit put together).
    package var fragment: [UInt8] = []
    package var fragmentInProgress = false
    /// True while the fragmented NAL unit in progress is written straight into the storage's
    /// access unit (`AccessUnitAssembler.beginNALUnit(header:leading:streamOffset:)`) rather
    /// than gathered in `fragment`.
    private var fragmentIsDirect = false
    /// The bytes of the fragmented NAL unit in progress so far, header byte included.
    private var fragmentByteCount = 0
    /// True when the fragmented NAL unit in progress is a coded slice.
    private var fragmentIsVCL = false
    /// The timestamp of the fragmented NAL unit in progress.
    private var fragmentTimestamp: UInt32 = 0
    package var pendingNALCount = 0
    private var pendingHasVCL = false
    private var pendingByteCount = 0
    private var pendingTimestamp: UInt32 = 0
    private var streamOffset = 0
    package var discarding = false
    package var discardTimestamp: UInt32?
    package var discardCounted = false
    /// True once a payload beginning with a start code has been warned about.
    package var warnedAnnexBPayload = false

    package init(configuration: Configuration, parameterSets: Storage.ParameterSets) {
        self.configuration = configuration
        self.storage = Storage(parameterSets: parameterSets)
    }

    /// Takes one received RTP packet, `packet`, which lies in `owner` when the caller gives a
    /// buffer the depacketizer may keep (empty: `packet` is valid only during the call). Not an
    /// optional, so that passing the caller's array retains nothing.
    ///
    /// The common case (the next packet in order, from the same source) runs in one function
    /// with what it calls inlined; every other case, and every report, is a call out of it.
    package mutating func append(packet: UnsafeRawBufferPointer, owner: borrowing [UInt8]) {
        packetCount += 1
        let header: RTPHeader, payload: Range<Int>
        do {
            (header, payload) = try RTPHeader.parseInline(packet)
        } catch {
            report(error)
            return
        }
        if let payloadType = configuration.payloadType, header.payloadType != payloadType {
            rejectPayloadType(header)
            return
        }
        if let ssrc, ssrc != header.ssrc { changeSource(to: header) }
        ssrc = header.ssrc
        let sequenceNumber = header.sequenceNumber
        if let expectedNumber = expected, sequenceNumber != expectedNumber {
            appendOutOfOrder(packet: packet, owner: owner, header: header, expected: expectedNumber)
            return
        }
        expected = sequenceNumber &+ 1
        storage.usePacket(owner, bytes: packet)
        process(header, UnsafeRawBufferPointer(rebasing: packet[payload]))
        if !waiting.isEmpty { drainWaiting() }
    }

    @inline(never)
    private mutating func rejectPayloadType(_ header: RTPHeader) {
        report(MediaError(.unexpectedPayloadType, field: "PT", byteOffset: 1,
                         "payload type \(header.payloadType), expected \(configuration.payloadType ?? 0)"))
    }

    @inline(never)
    private mutating func changeSource(to header: RTPHeader) {
        report(MediaError(.ssrcChanged, field: "SSRC", byteOffset: 8, "SSRC \(header.ssrc) after \(ssrc ?? 0): starting over"))
        dropPending()
        waiting = []
        expected = nil
    }

    /// Counts a packet that could not be read at all, and reports why.
    package mutating func reject(_ error: MediaError) {
        packetCount += 1
        report(error)
    }

    /// True when ``next()`` has an event to return.
    package var hasEvents: Bool { eventIndex < events.count }

    /// The next event, or nil when none is waiting. Inlined into each wrapper's `next()`: called
    /// once a packet, and an event copied out between two calls stalls on store forwarding.
    @inline(__always)
    package mutating func next() -> Event? {
        guard eventIndex < events.count else { return nil }
        // Moved out rather than copied: an access unit's buffers are not retained and released
        // once more per event.
        var event = Event.keyframeRequest
        swap(&event, &events[eventIndex])
        eventIndex += 1
        // The last one taken: the list starts over (keeping its capacity), so that a caller that
        // asks only while ``hasEvents`` never lets it grow.
        if eventIndex == events.count {
            events.removeAll(keepingCapacity: true)
            eventIndex = 0
        }
        return event
    }

    /// See ``RTPDepacketizing/finish()``.
    package mutating func finish() {
        while !waiting.isEmpty { skipToEarliestWaiting() }
        if fragmentInProgress {
            report(MediaError(.incompleteFragment, field: "FU header", "the stream ended inside a fragmented NAL unit"))
            dropPending()
        } else if !discarding {
            closeAccessUnit(endedByMarker: false)
        } else {
            dropPending()
        }
    }

    // MARK: - Payload

    @inline(__always)
    package mutating func process(_ header: RTPHeader, _ payload: UnsafeRawBufferPointer) {
        if discarding && discard(header) { return }
        guard !payload.isEmpty else {
            reportEmptyPayload(header)
            return
        }
        switch Format.structure(of: payload) {
        case .fragment:
            fragmentUnit(payload, header)
        case .singleNALUnit:
            if !abandonFragment(header) {
            } else if decodingOrderNumbers {
                singleWithDecodingOrderNumber(payload, header)
            } else {
                deliver(payload, header)
            }
        case .aggregation:
            if abandonFragment(header) { aggregation(payload, header) }
        case .startCode:
            if abandonFragment(header) { annexBPayload(payload, header) }
        case .unsupported(let type):
            reportUnsupported(type: type, header)
        case .truncated:
            reportShortPayload(payload.count, header)
        }
        if header.marker && pendingHasVCL && !fragmentInProgress {
            closeAccessUnit(endedByMarker: true)
        }
    }

    /// While discarding the rest of a damaged access unit: true when the packet with `header`
    /// belongs to it (and is dropped), false when it begins the next one (discarding ends).
    @inline(never)
    private mutating func discard(_ header: RTPHeader) -> Bool {
        if discardTimestamp == nil { discardTimestamp = header.timestamp }
        if header.timestamp == discardTimestamp {
            if !discardCounted { droppedAccessUnitCount += 1; discardCounted = true }
            if header.marker { discarding = false; discardTimestamp = nil }
            return true
        }
        discarding = false
        discardTimestamp = nil
        return false
    }

    /// A fragmentation unit (FU-A, FU): the continuation of the NAL unit in progress (most
    /// packets) inlined, the rest out of line.
    @inline(__always)
    private mutating func fragmentUnit(_ payload: UnsafeRawBufferPointer, _ header: RTPHeader) {
        // Payload header and FU header; a fragment without payload bytes is allowed (retina#115:
        // cameras end NAL units with an empty end fragment).
        let fuHeaderIndex = Format.nalHeaderSize
        guard payload.count > fuHeaderIndex else {
            reportShortFragment(payload.count, header)
            return
        }
        let fuHeader = payload[fuHeaderIndex]
        if fuHeader & 0x80 != 0 {
            // The start fragment alone carries the DONL (RFC 7798 section 4.4.3).
            let bodyStart = fuHeaderIndex + 1 + (decodingOrderNumbers ? 2 : 0)
            guard payload.count >= bodyStart else {
                reportShortFragment(payload.count, header)
                return
            }
            let body = UnsafeRawBufferPointer(rebasing: payload[bodyStart...]).assumingMemoryBound(to: UInt8.self)
            startFragment(payloadHeader: UnsafeRawBufferPointer(rebasing: payload[0..<fuHeaderIndex]), fuHeader: fuHeader, body: body, header)
            return
        }
        // Typed, so that appending is one memcpy rather than a byte loop.
        let body = UnsafeRawBufferPointer(rebasing: payload[(fuHeaderIndex + 1)...]).assumingMemoryBound(to: UInt8.self)
        guard fragmentInProgress else {
            dropFragmentWithoutStart(header)
            return
        }
        guard pendingByteCount + fragmentByteCount + body.count <= configuration.maximumAccessUnitSize else {
            dropOversizedFragment(header)
            return
        }
        if fragmentIsDirect {
            storage.appendToNALUnit(body)
        } else {
            fragment.append(contentsOf: body)
        }
        fragmentByteCount += body.count
        if fuHeader & 0x40 != 0 {
            fragmentInProgress = false
            deliverFragment(header)
        }
    }

    /// The first fragment of a NAL unit (with the last too when both S and E are set).
    @inline(never)
    private mutating func startFragment(payloadHeader: UnsafeRawBufferPointer, fuHeader: UInt8, body: UnsafeBufferPointer<UInt8>,
                                        _ header: RTPHeader) {
        let nalHeader = Format.nalHeader(payloadHeader: payloadHeader, fragmentType: fuHeader & Format.fragmentTypeMask)
        guard abandonFragment(header) else { return }
        fragment.removeAll(keepingCapacity: true)
        if fuHeader & 0x40 != 0 {
            appendToFragment(nalHeader, body)
            deliverFragment(header)
            return
        }
        fragmentInProgress = true
        fragmentByteCount = Format.nalHeaderSize + body.count
        fragmentIsVCL = Format.isVCL(firstByte: nalHeader.0)
        fragmentTimestamp = header.timestamp
        // Written into the access unit at once when the assembler can place it from its
        // first fragment; otherwise gathered and appended whole at its end.
        if !discarding, Format.nalHeaderSize == 1, storage.beginNALUnit(header: nalHeader.0, leading: body, streamOffset: streamOffset) {
            fragmentIsDirect = true
        } else {
            appendToFragment(nalHeader, body)
        }
    }

    /// Gathers a NAL unit header (``RTPPayloadFormat/nalHeaderSize`` bytes of it) and bytes after it.
    private mutating func appendToFragment(_ nalHeader: (UInt8, UInt8), _ body: UnsafeBufferPointer<UInt8>) {
        fragment.append(nalHeader.0)
        if Format.nalHeaderSize == 2 { fragment.append(nalHeader.1) }
        fragment.append(contentsOf: body)
    }

    @inline(never)
    private mutating func dropFragmentWithoutStart(_ header: RTPHeader) {
        report(MediaError(.missingFragmentStart, field: "FU header", byteOffset: 1,
                         "\(Format.fragmentName) fragment without its start in packet \(header.sequenceNumber): its access unit is dropped"))
        if pendingNALCount == 0 { droppedAccessUnitCount += 1 }
        dropPending()
        if !header.marker {
            discarding = true
            discardTimestamp = header.timestamp
            discardCounted = true
        }
    }

    private mutating func deliverFragment(_ header: RTPHeader) {
        guard fragmentIsDirect else {
            let nalUnit = fragment
            nalUnit.withUnsafeBytes { deliver($0, header) }
            return
        }
        // Already in the access unit: what `deliver` does around the assembler's append.
        guard admit(byteCount: fragmentByteCount, header) else { return }
        fragmentIsDirect = false
        storage.endNALUnit()
        account(byteCount: fragmentByteCount, isVCL: fragmentIsVCL, timestamp: header.timestamp)
    }

    /// Before a packet other than the continuation of a fragmentation unit: drops the one in
    /// progress, if any. False when the packet belongs to the access unit that fragment
    /// damaged (its timestamp), and is dropped with the rest of it.
    @inline(__always)
    private mutating func abandonFragment(_ header: RTPHeader) -> Bool {
        fragmentInProgress ? dropIncompleteFragment(header) : true
    }

    @inline(never)
    private mutating func dropIncompleteFragment(_ header: RTPHeader) -> Bool {
        report(MediaError(.incompleteFragment, field: "FU header",
                         "a fragmented NAL unit ended without its end fragment before packet \(header.sequenceNumber): its access unit is dropped"))
        dropPending()
        // The rest of that access unit goes with it, as after a fragment without its start: not
        // handed out as an access unit of its own.
        guard header.timestamp == fragmentTimestamp else { return true }
        discarding = true
        discardTimestamp = header.timestamp
        discardCounted = true
        return !discard(header)
    }

    // MARK: - Access units

    package mutating func deliver(_ nalUnit: UnsafeRawBufferPointer, _ header: RTPHeader) {
        guard admit(byteCount: nalUnit.count, header) else { return }
        // Typed, so that the assembler's append is one memcpy rather than a byte loop.
        if let unit = storage.append(nalUnit: nalUnit.assumingMemoryBound(to: UInt8.self), streamOffset: streamOffset) {
            emit(unit, endedByMarker: false)
            pendingNALCount = 0
            pendingHasVCL = false
            pendingByteCount = 0
            pendingTimestamp = header.timestamp
        }
        account(byteCount: nalUnit.count, isVCL: Format.isVCL(firstByte: nalUnit[0]), timestamp: header.timestamp)
    }

    /// Whether a NAL unit of `byteCount` bytes ending in the packet with `header` may join the
    /// access unit; when it would make it too large, the access unit is dropped.
    private mutating func admit(byteCount: Int, _ header: RTPHeader) -> Bool {
        guard !discarding else { return false }
        if pendingNALCount == 0 { pendingTimestamp = header.timestamp }
        if pendingByteCount + 4 + byteCount > configuration.maximumAccessUnitSize {
            report(MediaError(.overflow, field: "access unit",
                             "an access unit passed \(configuration.maximumAccessUnitSize) bytes at packet \(header.sequenceNumber): dropped"))
            if pendingNALCount == 0 { droppedAccessUnitCount += 1 }
            dropPending()
            discarding = true
            discardTimestamp = header.timestamp
            discardCounted = true
            return false
        }
        return true
    }

    /// Counts a NAL unit of `byteCount` bytes (a coded slice when `isVCL`), from a packet stamped
    /// `timestamp`, given to the storage. The access unit takes the timestamp of its first VCL
    /// NAL unit: a camera that sends SPS and PPS with the previous picture's timestamp
    /// (retina#13, Reolink) still gets its pictures' times.
    private mutating func account(byteCount: Int, isVCL: Bool, timestamp: UInt32) {
        streamOffset += 4 + byteCount
        pendingByteCount += 4 + byteCount
        pendingNALCount += 1
        if isVCL {
            if !pendingHasVCL { pendingTimestamp = timestamp }
            pendingHasVCL = true
        }
    }

    private mutating func closeAccessUnit(endedByMarker: Bool) {
        if let unit = storage.finishAccessUnit() { emit(unit, endedByMarker: endedByMarker) }
        pendingNALCount = 0
        pendingHasVCL = false
        pendingByteCount = 0
    }

    private mutating func emit(_ unit: Storage.Unit, endedByMarker: Bool) {
        events.append(.accessUnit(RTPReceivedAccessUnit(accessUnit: unit, timestamp: pendingTimestamp, endedByMarker: endedByMarker)))
    }

    /// Drops the access unit being received and any fragment in progress.
    package mutating func dropPending() {
        if pendingNALCount > 0 || fragmentInProgress { droppedAccessUnitCount += 1 }
        fragmentIsDirect = false
        storage.dropAccessUnit()
        pendingNALCount = 0
        pendingHasVCL = false
        pendingByteCount = 0
        fragmentInProgress = false
        fragment.removeAll(keepingCapacity: true)
    }

    package mutating func report(_ error: MediaError) {
        events.append(.diagnostic(error))
    }
}
