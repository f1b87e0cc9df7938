/// The presentation order of access units that come in decoding order, as they come: what a
/// live source needs to stamp B-frame streams with presentation times (RTP timestamps are
/// presentation times, RFC 6184 section 5.1) without reading the whole stream first.
///
/// It runs a decoder's output process (the "bumping" of clause C.4.5.3): pictures wait in a
/// buffer of the SPS's reorder depth (``SequenceParameterSet/maximumReorderDepth``; twice that
/// in fields when the SPS allows field pictures, each field being an access unit), and whenever
/// it holds more, the one with the smallest picture order count (``AccessUnitPictureOrder``)
/// takes the next presentation index; an IDR picture flushes the buffer (its coded video
/// sequence starts afresh). Access units come out in decoding order once their index is known,
/// with ``Placed/presentationIndex`` ≥ ``Placed/decodeIndex`` (the indices are shifted by the
/// largest buffer seen), so that no picture is presented before it is decoded. An access unit
/// waits at most ``maximumWait`` access units (a decoded picture buffer holds at most 16 frames,
/// clause A.3.1): one that would wait longer (a stream that breaks its own reorder depth) is
/// placed at once, so the memory stays bounded and the indices keep rising.
///
/// ```swift
/// var order = PresentationOrder()
/// for unit in accessUnits {              // decoding order, pictures only
///     for placed in order.append(unit) { send(placed.accessUnit, at: interval * placed.presentationIndex) }
/// }
/// for placed in order.finish() { send(placed.accessUnit, at: interval * placed.presentationIndex) }
/// ```
public struct PresentationOrder: Sendable {
    /// An access unit with its place in decoding and in presentation order (frame counts from
    /// the first access unit).
    public struct Placed: Sendable {
        /// The access unit.
        public let accessUnit: AccessUnit
        /// Its position in decoding order.
        public let decodeIndex: Int
        /// Its position in presentation order, shifted by the reorder depth (≥ ``decodeIndex``).
        public let presentationIndex: Int
    }

    private var pictureOrder = AccessUnitPictureOrder()
    private var core = PresentationOrdering<AccessUnit>()

    /// The most access units one waits for its presentation index: a decoded picture buffer's
    /// 16 frames as 32 fields, and one more picture being decoded.
    public static let maximumWait = PresentationOrdering<AccessUnit>.maximumWait

    /// An order at the start of a stream.
    public init() {}

    /// Adds the next access unit in decoding order (one with a picture); returns the access
    /// units, in decoding order, whose presentation index is now known.
    ///
    /// - Parameter unit: the access unit.
    /// - Returns: the access units placed, possibly none.
    public mutating func append(_ unit: AccessUnit) -> [Placed] {
        let depth = unit.formatDescription?.sequenceParameterSet.map { sps in
            sps.frameMbsOnlyFlag ? sps.maximumReorderDepth : 2 * sps.maximumReorderDepth + 1
        }
        let count = pictureOrder.picOrderCnt(of: unit)
        return Self.placed(core.append(unit, startsSequence: unit.isIDR, reorderDepth: depth, picOrderCount: count))
    }

    /// Places every access unit still waiting (the end of the stream); the order starts afresh
    /// for what follows, its indices going on.
    ///
    /// - Returns: the access units not yet returned, in decoding order.
    public mutating func finish() -> [Placed] { Self.placed(core.finish()) }

    private static func placed(_ units: [PresentationOrdering<AccessUnit>.Placed]) -> [Placed] {
        units.map { Placed(accessUnit: $0.unit, decodeIndex: $0.decodeIndex, presentationIndex: $0.presentationIndex) }
    }
}

/// The output process behind ``PresentationOrder``, for access units of either codec: each
/// comes with whether it starts a coded video sequence (an H.264 IDR; an H.265 IDR or BLA
/// picture), the reorder depth its SPS signals, and its picture order count.
package struct PresentationOrdering<Unit: Sendable>: Sendable {
    /// An access unit with its places in decoding and presentation order.
    package struct Placed: Sendable {
        /// The access unit.
        package let unit: Unit
        /// Its position in decoding order.
        package let decodeIndex: Int
        /// Its position in presentation order, shifted by the reorder depth.
        package let presentationIndex: Int
    }

    /// Access units in decoding order, waiting for their presentation index.
    private var waiting: [(unit: Unit, decodeIndex: Int, presentationIndex: Int?)] = []
    /// The decode indices and counts of the pictures in the output buffer (not yet presented).
    private var buffer: [(decodeIndex: Int, count: Int)] = []
    private var nextDecodeIndex = 0
    private var nextOutputIndex = 0
    /// The reorder depth of the current SPS, in access units; the largest seen shifts the indices.
    private var depth = 0
    private var largestDepth = 0

    /// The most access units one waits for its presentation index.
    package static var maximumWait: Int { 34 }

    /// An order at the start of a stream.
    package init() {}

    /// Adds the next access unit in decoding order; returns those whose presentation index is now known.
    ///
    /// - Parameters:
    ///   - unit: the access unit.
    ///   - startsSequence: true when it starts a coded video sequence (the buffer is flushed first).
    ///   - reorderDepth: the reorder depth in access units its SPS signals; nil: the last one.
    ///   - picOrderCount: its picture order count.
    package mutating func append(_ unit: Unit, startsSequence: Bool, reorderDepth: Int?, picOrderCount: Int) -> [Placed] {
        if startsSequence { flush() }
        if let reorderDepth {
            depth = reorderDepth
            largestDepth = max(largestDepth, depth)
        }
        waiting.append((unit, nextDecodeIndex, nil))
        buffer.append((nextDecodeIndex, picOrderCount))
        nextDecodeIndex += 1
        while buffer.count > depth { bump() }
        // A stream that breaks its reorder depth: the oldest waits no longer than this.
        while let first = waiting.first, first.presentationIndex == nil, nextDecodeIndex - first.decodeIndex > Self.maximumWait {
            output(decodeIndex: first.decodeIndex)
        }
        return takePlaced()
    }

    /// Places every access unit still waiting; the order starts afresh, its indices going on.
    package mutating func finish() -> [Placed] {
        flush()
        return takePlaced()
    }

    /// Presents every buffered picture, in order of their counts.
    private mutating func flush() {
        while !buffer.isEmpty { bump() }
    }

    /// Presents the buffered picture with the smallest count (the earlier decoded on a tie).
    private mutating func bump() {
        guard let smallest = buffer.indices.min(by: { (buffer[$0].count, buffer[$0].decodeIndex) < (buffer[$1].count, buffer[$1].decodeIndex) })
        else { return }
        output(decodeIndex: buffer[smallest].decodeIndex)
    }

    /// Gives the waiting access unit with `decodeIndex` the next presentation index.
    private mutating func output(decodeIndex: Int) {
        buffer.removeAll { $0.decodeIndex == decodeIndex }
        guard let position = waiting.firstIndex(where: { $0.decodeIndex == decodeIndex }) else { return }
        waiting[position].presentationIndex = nextOutputIndex + largestDepth
        nextOutputIndex += 1
    }

    /// The waiting access units, from the first, whose presentation index is known.
    private mutating func takePlaced() -> [Placed] {
        let ready = waiting.prefix { $0.presentationIndex != nil }
        waiting.removeFirst(ready.count)
        return ready.map { Placed(unit: $0.unit, decodeIndex: $0.decodeIndex, presentationIndex: $0.presentationIndex!) }
    }
}
