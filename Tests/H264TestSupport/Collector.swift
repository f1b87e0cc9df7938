import H264

/// Collects what a producer hands out on other threads — an encoder session's output handler,
/// a server's events — in arrival order, behind the package's one lock (`Locked`).
public final class Collector<Element: Sendable>: Sendable {
    private let storage: Locked<[Element]>

    /// An empty collector with room for `capacity` elements (reserved up front, so appending
    /// allocates nothing until it is exceeded).
    public init(capacity: Int = 0) {
        var elements: [Element] = []
        elements.reserveCapacity(capacity)
        storage = Locked(elements)
    }

    /// Appends one element.
    public func append(_ element: Element) { storage.withLock { $0.append(element) } }

    /// ``append(_:)`` as a closure, e.g. for `EncoderSession(outputHandler:)`.
    public var handler: @Sendable (Element) -> Void { { [self] in append($0) } }

    /// Everything collected so far.
    public var all: [Element] { storage.withLock { $0 } }

    /// How many elements were collected.
    public var count: Int { storage.withLock { $0.count } }

    /// Empties the collector, keeping its capacity.
    public func removeAll() { storage.withLock { $0.removeAll(keepingCapacity: true) } }
}
