/// The FIFO behind a ``BoundedFrameStream``: a ring of slots that grows by doubling up to the
/// stream's capacity and is then reused, so a full stream that keeps dropping allocates
/// nothing, and a slot is emptied the moment its frame is taken or dropped (the ring holds
/// nothing it has handed out). Kept behind the stream's lock.
struct FrameRing<Frame> {
    private var slots: [Frame?] = []
    private var head = 0
    /// How many frames wait.
    private(set) var count = 0
    /// The most frames the ring holds.
    let capacity: Int

    /// An empty ring for at most `capacity` frames (at least 1).
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// True when ``capacity`` frames wait.
    var isFull: Bool { count >= capacity }

    /// The oldest waiting frame, without taking it.
    var first: Frame? { count == 0 ? nil : slots[head] }

    /// Appends `frame`; the caller checked ``isFull``.
    mutating func append(_ frame: Frame) {
        if count == slots.count { grow() }
        slots[(head + count) % slots.count] = frame
        count += 1
    }

    /// Takes the oldest waiting frame, or nil.
    mutating func popFirst() -> Frame? {
        guard count > 0 else { return nil }
        let frame = slots[head]
        slots[head] = nil
        head = (head + 1) % slots.count
        count -= 1
        return frame
    }

    /// Empties the ring, keeping its slots; returns how many frames were dropped.
    mutating func removeAll() -> Int {
        let dropped = count
        while count > 0 { _ = popFirst() }
        head = 0
        return dropped
    }

    /// Doubles the slots (8 at first, never past ``capacity``), oldest frame first.
    private mutating func grow() {
        let grown = min(max(8, slots.count * 2), capacity)
        var next: [Frame?] = []
        next.reserveCapacity(grown)
        for index in 0..<count { next.append(slots[(head + index) % slots.count]) }
        next.append(contentsOf: repeatElement(nil, count: grown - count))
        slots = next
        head = 0
    }
}

extension FrameRing: Sendable where Frame: Sendable {}
