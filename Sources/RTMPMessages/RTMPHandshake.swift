public import MediaCore
/// The plain RTMP handshake (RTMP specification clause 5.2), sans I/O, for either side: the
/// version byte 3, then 1,536 bytes (a time, four zero bytes, random bytes), then the echo of
/// the peer's 1,536 bytes.
///
/// A client sends ``initialBytes`` (C0 and C1), feeds what the server answers to
/// ``receive(_:)`` until it is ``isComplete``, sending what each call returns (C2, once S1 has
/// come): the bytes
/// after S2 are the start of the chunk stream (``remainder``). A server is the same with the
/// roles swapped: it sends S0, S1 and S2 once C0 and C1 have come, and is complete after C2.
/// Every server accepts this plain form (without the HMAC digest of Flash Player 9's form).
public struct RTMPHandshake: Sendable {
    /// The side of the connection.
    public enum Role: Sendable {
        /// Sends C0, C1 and C2.
        case client
        /// Sends S0, S1 and S2.
        case server
    }

    /// The RTMP version, C0/S0 (clause 5.2.2).
    public static let version: UInt8 = 3
    /// The length of C1/S1 and C2/S2 (clause 5.2.3).
    public static let packetLength = 1536

    /// This side's role.
    public let role: Role
    private let own: [UInt8]
    private var received: [UInt8] = []
    private var answered = false
    /// True once the peer's last handshake packet has come.
    public private(set) var isComplete = false
    /// The bytes received after the handshake: the first chunks.
    public private(set) var remainder: [UInt8] = []

    /// A handshake whose C1/S1 carries `time` (milliseconds; 0 is fine) and `random`
    /// (1,528 bytes, repeated or cut to that length; empty: zeros, which servers accept).
    public init(role: Role, time: UInt32 = 0, random: [UInt8] = []) {
        self.role = role
        var packet: [UInt8] = []
        packet.reserveCapacity(Self.packetLength)
        BigEndian.append(Int(time), count: 4, to: &packet)
        packet.append(contentsOf: [0, 0, 0, 0])
        if random.isEmpty {
            packet.append(contentsOf: repeatElement(0, count: Self.packetLength - 8))
        } else {
            while packet.count < Self.packetLength { packet.append(contentsOf: random.prefix(Self.packetLength - packet.count)) }
        }
        own = packet
    }

    /// What a client sends first: C0 and C1 (empty for a server, which waits for them).
    public var initialBytes: [UInt8] { role == .client ? [Self.version] + own : [] }

    /// Takes the peer's bytes; returns what to send now (C2 for a client once S0 and S1 have
    /// come, S0 S1 S2 for a server once C0 and C1 have come; else empty).
    ///
    /// - Throws: `MediaError.Code.invalidRTMPHandshake` when the peer's version byte is not 3
    ///   (fatal).
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(MediaError) -> [UInt8] {
        guard !isComplete else {
            remainder.append(contentsOf: bytes)
            return []
        }
        received.append(contentsOf: bytes)
        if let version = received.first, version != Self.version {
            throw MediaError(.invalidRTMPHandshake, field: role == .client ? "S0" : "C0", byteOffset: 0,
                            "RTMP version \(version), not 3\(version == 0x16 ? " (a TLS handshake: rtmps://?)" : "")")
        }
        var output: [UInt8] = []
        let peerPacket = 1 + Self.packetLength
        if !answered, received.count >= peerPacket {
            // C2 echoes S1 as soon as it has come (servers may wait for C2 before sending S2);
            // S0 S1 S2 go together once C1 has come.
            answered = true
            output = role == .client ? Array(received[1..<peerPacket]) : [Self.version] + own + received[1..<peerPacket]
        }
        let whole = peerPacket + Self.packetLength
        if received.count >= whole {
            isComplete = true
            remainder = Array(received[whole...])
            received = []
        }
        return output
    }

    /// Empties ``remainder`` and returns it.
    public mutating func takeRemainder() -> [UInt8] {
        defer { remainder = [] }
        return remainder
    }
}
