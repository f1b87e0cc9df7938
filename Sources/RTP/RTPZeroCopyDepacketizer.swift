public import MediaCore
public import H264
/// ``RTPDepacketizer`` without the copy: its access units (`AccessUnitView`) refer to the
/// buffers the packets were received in, so the payload bytes are copied once, into wherever
/// they go (a decoder's input buffer, a file), instead of first into an access unit.
///
/// ```swift
/// var depacketizer = RTPZeroCopyDepacketizer()
/// var buffer = [UInt8](repeating: 0, count: 64 << 10)
/// while let datagrams = receive(into: &buffer) {       // e.g. recvmmsg, or a TCP read of
///     for range in datagrams {                         // RTP over RTSP's interleaved channel
///         depacketizer.append(packet: range, in: buffer)
///     }
///     buffer = [UInt8](repeating: 0, count: 64 << 10)  // the views keep the old one
///     while let event = depacketizer.next() {
///         if case .accessUnit(let unit) = event {
///             unit.accessUnit.copyBytes(into: decoderInput, format: .avcc)
///         }
///     }
/// }
/// ```
///
/// Everything else is ``RTPDepacketizer``'s, by the same code: the payload formats, sequence
/// order and loss, events, diagnostics and the access-unit boundary rule; the same packets give
/// the same events, with `AccessUnitView.accessUnit` equal to the AVCC access units
/// ``RTPDepacketizer`` hands out.
///
/// A buffer given to ``append(packet:in:)`` is kept (not copied) by the views that refer to
/// it, as long as they live; arrays are values, so writing into the caller's copy afterwards
/// leaves the views' bytes as they were (the write copies the array). Bytes are copied only
/// where the stream needs it: a NAL unit that had to be gathered before it could be placed (a
/// parameter set split into FU-A fragments, or an FU-A whose first fragment is too short for
/// its slice header).
public struct RTPZeroCopyDepacketizer: RTPDepacketizerCoreWrapper {
    /// How packets are received (``RTPDepacketizer/Configuration``); here
    /// ``RTPDepacketizer/Configuration/maximumAccessUnitSize`` is at most 1 GiB.
    public typealias Configuration = RTPDepacketizer.Configuration

    /// An access unit with its RTP timestamp; its `accessUnit` refers to the received buffers.
    public typealias ReceivedAccessUnit = RTPReceivedAccessUnit<AccessUnitView>

    /// What the depacketizer found (as ``RTPDepacketizer/Event``).
    public typealias Event = RTPDepacketizerEvent<AccessUnitView>

    /// Everything but how access units are kept; its counts, events and end are read through
    /// ``RTPDepacketizing``.
    package var core: RTPDepacketizerCore<AccessUnitViewAssembler>

    /// Creates a depacketizer, optionally knowing parameter sets already (e.g. from the SDP's
    /// `sprop-parameter-sets`).
    ///
    /// - Parameters:
    ///   - configuration: how packets are received.
    ///   - parameterSets: parameter sets known before the first packet.
    public init(configuration: Configuration = Configuration(), parameterSets: ParameterSetCache = ParameterSetCache()) {
        var configuration = configuration
        // The views count in 32 bits.
        configuration.maximumAccessUnitSize = Swift.min(configuration.maximumAccessUnitSize, 1 << 30)
        core = RTPDepacketizerCore(configuration: configuration, parameterSets: parameterSets)
    }

    /// Takes one received RTP packet, the bytes `range` of `buffer`, keeping `buffer` rather than
    /// copying from it. Many packets may share one buffer, as a `recvmmsg` or a read of RTP over
    /// a TCP connection fills it; it is kept once per access unit.
    ///
    /// A range outside `buffer` is reported as an `MediaError.Code.lengthPastEnd` diagnostic
    /// and counted as a packet that could not be read.
    ///
    /// - Parameters:
    ///   - range: where the packet (RTP header first) lies in `buffer`.
    ///   - buffer: the bytes received.
    public mutating func append(packet range: Range<Int>, in buffer: [UInt8]) {
        guard range.lowerBound >= 0, range.upperBound <= buffer.count else {
            core.reject(MediaError(.lengthPastEnd, field: "packet range",
                                  "packet at \(range) of a \(buffer.count)-byte buffer: not read"))
            return
        }
        buffer.withUnsafeBytes { core.append(packet: UnsafeRawBufferPointer(rebasing: $0[range]), owner: buffer) }
    }

    /// Takes one received RTP packet (a UDP payload), keeping the array rather than copying it.
    ///
    /// - Parameter packet: the packet, RTP header first.
    public mutating func append(packet: [UInt8]) {
        packet.withUnsafeBytes { core.append(packet: $0, owner: packet) }
    }

    /// The next event, or nil when none is waiting.
    @inlinable
    public mutating func next() -> Event? {
        // Called after every packet, and most find nothing: that answer is made inline.
        hasEvents ? nextEvent() : nil
    }

    /// True when ``next()`` has an event to return (a mutating getter: asking copies nothing).
    @usableFromInline
    package var hasEvents: Bool { mutating get { core.hasEvents } }

    /// ``next()`` when ``hasEvents``.
    @usableFromInline
    package mutating func nextEvent() -> Event? { core.next() }
}
