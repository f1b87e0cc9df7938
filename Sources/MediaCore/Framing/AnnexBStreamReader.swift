/// A NAL unit read from an Annex-B stream by ``AnnexBStreamReader``.
public struct StreamNALUnit: Hashable, Sendable {
    /// The NAL unit's bytes, header byte first, without start code or trailing zero bytes.
    /// Never empty.
    public var bytes: [UInt8]
    /// The offset in the whole stream of the first byte of this unit's start code — the same
    /// convention as ``NALUnitLocation/startCodeOffset``.
    public var streamOffset: Int

    /// Creates a unit.
    public init(bytes: [UInt8], streamOffset: Int) {
        self.bytes = bytes
        self.streamOffset = streamOffset
    }
}

/// Splits an Annex-B byte stream that arrives in chunks of any size into NAL units.
///
/// ```swift
/// var reader = AnnexBStreamReader()
/// for chunk in chunks {
///     reader.append(chunk)
///     while let unit = reader.next() { handle(unit) }
/// }
/// for unit in reader.finish() { handle(unit) }
/// ```
///
/// A NAL unit is handed out as soon as the start code after it has been seen, so the unit is
/// certain to be complete. The result never depends on how the stream was chunked: it is
/// exactly ``AnnexB/nalUnits(in:)-([UInt8])`` of the whole stream, mapped to bytes (same
/// rules for 3/4-byte start codes, trailing zero bytes and empty NAL units).
///
/// Each byte is scanned once (a chunk boundary makes the last two bytes be looked at again),
/// so the total work is linear in the stream whatever the chunk sizes. Bytes are dropped as
/// soon as they are no longer needed: memory is bounded by the largest NAL unit plus the
/// largest chunk. Bytes before the first start code are skipped and counted in
/// ``skippedByteCount``.
public struct AnnexBStreamReader: Sendable {
    /// Bytes not yet handed out; `buffer[0]` is at stream offset `bufferStreamOffset`.
    private var buffer: [UInt8] = []
    /// Leading bytes of `buffer` no longer needed, dropped at the next `append`.
    private var consumed = 0
    private var bufferStreamOffset = 0
    /// The buffer index from which a `00 00 01` has not yet been looked for.
    private var scanPosition = 0
    /// The unit being read: its start code's stream offset and the buffer index of its header byte.
    private var current: (startCodeOffset: Int, payloadStart: Int)?
    private var foundStartCode = false

    /// The number of bytes before the first start code (garbage or `leading_zero_8bits`),
    /// as far as the stream has been read.
    public private(set) var skippedByteCount = 0

    /// Creates a reader at the start of a stream.
    public init() {}

    /// The number of bytes received so far.
    public var streamLength: Int { bufferStreamOffset + buffer.count }

    /// The number of bytes held: the unit being read, plus bytes appended since the last
    /// ``next()``. Bounded by the largest NAL unit and chunk, with their start codes.
    public var bufferedByteCount: Int { buffer.count - consumed }

    /// Adds the next bytes of the stream.
    public mutating func append(_ chunk: some Collection<UInt8>) {
        compact()
        buffer.append(contentsOf: chunk)
    }

    /// Adds the next bytes of the stream.
    public mutating func append(contentsOf chunk: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: chunk)
    }

    /// The next complete NAL unit, or `nil` when more bytes are needed to know where it ends.
    public mutating func next() -> StreamNALUnit? {
        while true {
            let prefix = buffer.withUnsafeBytes { AnnexB.findStartCodePrefix(in: $0, from: scanPosition) }
            guard let prefix else {
                scanPosition = max(scanPosition, buffer.count - 2)
                if !foundStartCode {
                    // Keep one byte before the scan position: it may be a zero_byte.
                    let keep = max(scanPosition - 1, 0)
                    skippedByteCount = bufferStreamOffset + keep
                    consumed = keep
                }
                return nil
            }
            let unit = current
            let lowerBound = unit?.payloadStart ?? 0
            let startCode = buffer.withUnsafeBytes {
                AnnexB.startCodeOffset(ofPrefixAt: prefix, in: $0, lowerBound: lowerBound)
            }
            if !foundStartCode {
                foundStartCode = true
                skippedByteCount = bufferStreamOffset + startCode
            }
            current = (bufferStreamOffset + startCode, prefix + 3)
            scanPosition = prefix + 3
            consumed = startCode
            if let unit, let made = makeUnit(unit, end: prefix) { return made }
        }
    }

    /// Every NAL unit that is complete so far (see ``next()``).
    public mutating func nalUnits() -> [StreamNALUnit] {
        var units: [StreamNALUnit] = []
        while let unit = next() { units.append(unit) }
        return units
    }

    /// Ends the stream: returns every remaining NAL unit, the last one ending at the end of the
    /// data, and resets the reader for a new stream (offsets start again at 0).
    /// ``skippedByteCount`` keeps the finished stream's count until the next ``finish()``.
    public mutating func finish() -> [StreamNALUnit] {
        var units = nalUnits()
        if let unit = current, let last = makeUnit(unit, end: buffer.count) { units.append(last) }
        if !foundStartCode { skippedByteCount = streamLength }
        let skipped = skippedByteCount
        self = AnnexBStreamReader()
        skippedByteCount = skipped
        return units
    }

    /// The unit starting at `unit` and ending before `end` with trailing zeros trimmed, or `nil` if empty.
    private func makeUnit(_ unit: (startCodeOffset: Int, payloadStart: Int), end: Int) -> StreamNALUnit? {
        let trimmed = buffer.withUnsafeBytes { AnnexB.trimmedEnd(in: $0, from: unit.payloadStart, to: end) }
        guard trimmed > unit.payloadStart else { return nil }
        return StreamNALUnit(bytes: Array(buffer[unit.payloadStart..<trimmed]), streamOffset: unit.startCodeOffset)
    }

    /// Drops the consumed bytes, shifting the indices that point into the buffer.
    private mutating func compact() {
        guard consumed > 0 else { return }
        buffer.removeSubrange(0..<consumed)
        bufferStreamOffset += consumed
        scanPosition -= consumed
        if let unit = current { current = (unit.startCodeOffset, unit.payloadStart - consumed) }
        consumed = 0
    }
}
