import Crypto

/// The nonces of an ``RTSPServer``'s Digest challenges (RFC 7616 clause 3.3), without a table:
/// each nonce carries the time it was made and a MAC of that time under a key only this server
/// knows, so any connection can check a nonce it is given — made here, and how long ago —
/// and the memory does not grow with the nonces handed out or the wrong answers received.
///
/// A nonce is 64 hex digits: the milliseconds since the server started (16), 64 random bits
/// (16), and the first 128 bits of HMAC-SHA-256 over both (32). The key, the random bits and
/// the `opaque` come from `SystemRandomNumberGenerator`.
struct RTSPDigestNonces: Sendable {
    /// What a nonce a client sends is.
    enum Freshness: Equatable, Sendable {
        /// Made here within the lifetime.
        case fresh
        /// Made here, longer ago than the lifetime: answered with `stale=TRUE` when the
        /// response is otherwise right.
        case expired
        /// Not made here (or not by this run of the server).
        case unknown
    }

    private enum Kind: Sendable {
        /// The HMAC key's bytes (`SymmetricKey` is not `Sendable`).
        case signed([UInt8])
        /// One nonce, made at an instant (a test's, such as the RFCs' examples).
        case fixed(String, ContinuousClock.Instant)
    }

    private let kind: Kind
    /// When the server started: nonces count their time from here.
    private let origin: ContinuousClock.Instant
    /// The `opaque` of every challenge (echoed by clients; not checked).
    let opaque: String

    /// Nonces under a new random key, counting from `origin`.
    init(origin: ContinuousClock.Instant = .now) {
        var generator = SystemRandomNumberGenerator()
        let key = (0..<4).flatMap { _ in Self.bytes(of: generator.next()) }
        kind = .signed(key)
        self.origin = origin
        opaque = RTSPDigest.hex(Self.bytes(of: generator.next()))
    }

    /// Always `nonce`, made at `madeAt` (tests: the RFCs' example nonces).
    init(fixed nonce: String, madeAt: ContinuousClock.Instant, opaque: String) {
        kind = .fixed(nonce, madeAt)
        origin = madeAt
        self.opaque = opaque
    }

    /// A new nonce, made at `now`.
    func make(at now: ContinuousClock.Instant) -> String {
        switch kind {
        case .fixed(let nonce, _):
            return nonce
        case .signed(let key):
            var generator = SystemRandomNumberGenerator()
            let body = Self.bytes(of: milliseconds(at: now)) + Self.bytes(of: generator.next())
            return RTSPDigest.hex(body + Self.mac(body, key: key))
        }
    }

    /// Whether `nonce` was made here, and within `lifetime` of `now`.
    func freshness(of nonce: String, at now: ContinuousClock.Instant, lifetime: Duration) -> Freshness {
        switch kind {
        case .fixed(let fixed, let madeAt):
            guard nonce == fixed else { return .unknown }
            return now - madeAt > lifetime ? .expired : .fresh
        case .signed(let key):
            guard let bytes = RTSPDigest.bytes(ofHex: nonce, limit: 32), bytes.count == 32,
                  RTSPDigest.constantTimeEqual(Self.mac(Array(bytes[0..<16]), key: key), bytes[16...]) else { return .unknown }
            let madeAt = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let nowMilliseconds = milliseconds(at: now)
            guard madeAt <= nowMilliseconds else { return .unknown }
            let (seconds, attoseconds) = lifetime.components
            let lifetimeMilliseconds = UInt64(clamping: seconds) &* 1000 &+ UInt64(clamping: attoseconds / 1_000_000_000_000_000)
            return nowMilliseconds - madeAt > lifetimeMilliseconds ? .expired : .fresh
        }
    }

    /// The milliseconds from `origin` to `now` (0 before it).
    private func milliseconds(at now: ContinuousClock.Instant) -> UInt64 {
        let (seconds, attoseconds) = (now - origin).components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1000 &+ UInt64(attoseconds / 1_000_000_000_000_000)
    }

    private static func mac(_ body: [UInt8], key: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: key)).prefix(16))
    }

    private static func bytes(of value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}
