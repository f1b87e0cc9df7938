public import H264

/// Feeds `bytes` to `receiver` in chunks of random sizes in 1…`maxChunk` (seeded, so a
/// failure reproduces), draining its events after each chunk, then finishes: every event, in
/// order. The one chunk feeder of the receiver tests.
public func receiveInRandomChunks(_ bytes: ArraySlice<UInt8>, maxChunk: Int, seed: UInt64,
                                  receiver: AccessUnitReceiver = AccessUnitReceiver()) -> [AccessUnitReceiver.Event] {
    var receiver = receiver
    var generator = SplitMix64(seed: seed)
    var events: [AccessUnitReceiver.Event] = []
    var i = bytes.startIndex
    while i < bytes.endIndex {
        let n = min(Int.random(in: 1...maxChunk, using: &generator), bytes.endIndex - i)
        receiver.append(bytes[i..<(i + n)])
        while let event = receiver.next() { events.append(event) }
        i += n
    }
    events += receiver.finish()
    return events
}

/// The access units among a receiver's events.
public func accessUnits(_ events: [AccessUnitReceiver.Event]) -> [AccessUnit] {
    events.compactMap { if case .accessUnit(let unit) = $0 { unit } else { nil } }
}

/// The NAL units an `AnnexBStreamReader` hands out when `bytes` arrive in chunks of random sizes
/// in 1…`maxChunk` (seeded), the units of `finish()` included: the one chunk feeder of the
/// access-unit tests of both codecs.
public func nalUnitsInRandomChunks(_ bytes: [UInt8], maxChunk: Int, seed: UInt64) -> [StreamNALUnit] {
    var generator = SplitMix64(seed: seed)
    var reader = AnnexBStreamReader()
    var units: [StreamNALUnit] = []
    var position = 0
    while position < bytes.count {
        let end = min(bytes.count, position + Int.random(in: 1...maxChunk, using: &generator))
        reader.append(bytes[position..<end])
        while let unit = reader.next() { units.append(unit) }
        position = end
    }
    return units + reader.finish()
}
