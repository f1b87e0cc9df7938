/// What ``RTPDepacketizer`` and ``RTPZeroCopyDepacketizer`` both answer: their counts, their
/// parameter sets, their events and the end of the stream. Code that reads either can be
/// generic over it; each adds its own ways of taking packets (`append(packet:)`).
public protocol RTPDepacketizing: Sendable {
    /// What a complete access unit is handed out as: ``AccessUnit`` or ``AccessUnitView``.
    associatedtype Unit: Sendable

    /// The configuration.
    var configuration: RTPDepacketizer.Configuration { get }
    /// Packets given to the depacketizer.
    var packetCount: Int { get }
    /// Packets declared lost.
    var lostPacketCount: Int { get }
    /// Access units dropped because of loss or damage.
    var droppedAccessUnitCount: Int { get }
    /// The parameter sets seen so far (from the stream, or given at creation, e.g. from an SDP).
    var parameterSets: ParameterSetCache { get }

    /// The next event, or nil when none is waiting.
    mutating func next() -> RTPDepacketizerEvent<Unit>?

    /// Ends the stream: packets still waiting for a missing one are taken (the missing ones are
    /// lost), and the last access unit is handed out if it is complete as far as can be told.
    /// Read the events with ``next()``.
    mutating func finish()
}

/// A depacketizer that is one ``RTPDepacketizerCore`` and the way it keeps access units: all of
/// ``RTPDepacketizing`` is the core's, forwarded here once for both.
protocol RTPDepacketizerCoreWrapper: RTPDepacketizing {
    /// How the bytes of the access unit being received are kept.
    associatedtype Storage: RTPAccessUnitStorage where Storage.Unit == Unit

    /// The depacketizer itself.
    var core: RTPDepacketizerCore<Storage> { get set }
}

extension RTPDepacketizerCoreWrapper {
    /// The configuration.
    public var configuration: RTPDepacketizer.Configuration { core.configuration }
    /// Packets given to the depacketizer.
    public var packetCount: Int { core.packetCount }
    /// Packets declared lost.
    public var lostPacketCount: Int { core.lostPacketCount }
    /// Access units dropped because of loss or damage.
    public var droppedAccessUnitCount: Int { core.droppedAccessUnitCount }
    /// The parameter sets seen so far (from the stream, or given at creation, e.g. from an SDP).
    public var parameterSets: ParameterSetCache { core.parameterSets }

    /// The next event, or nil when none is waiting.
    @inlinable
    public mutating func next() -> RTPDepacketizerEvent<Unit>? {
        // Called after every packet, and most find nothing: that answer is made inline.
        hasEvents ? nextEvent() : nil
    }

    /// True when ``next()`` has an event to return. A mutating getter, so that asking does not
    /// copy the depacketizer.
    @usableFromInline
    var hasEvents: Bool { mutating get { core.hasEvents } }

    /// ``next()`` when ``hasEvents``.
    @usableFromInline
    mutating func nextEvent() -> RTPDepacketizerEvent<Unit>? {
        core.next()
    }

    /// Ends the stream, as ``RTPDepacketizing/finish()`` says. Read the events with ``next()``.
    public mutating func finish() {
        core.finish()
    }
}
