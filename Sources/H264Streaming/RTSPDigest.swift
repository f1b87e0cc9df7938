import Crypto

/// The hashing of Digest access authentication (RFC 7616 clause 3.4.1; RFC 2617, and RFC
/// 2069's form without `qop`), shared by the client (`RTSPAuthenticator`) and the server
/// (`RTSPServerAuthenticator`): the algorithms, the `response`, and a comparison that takes the
/// same time wherever two values differ. Hashes from swift-crypto.
enum RTSPDigest {
    /// A digest algorithm of RFC 7616 clause 3.3.
    enum Algorithm: Equatable, Sendable {
        case md5, sha256

        /// The algorithm named by a challenge's or a response's `algorithm` (none: MD5), and
        /// whether it is a `-sess` variant; nil for another name.
        init?(name: String?) {
            switch name?.uppercased() ?? "MD5" {
            case "MD5", "MD5-SESS": self = .md5
            case "SHA-256", "SHA-256-SESS": self = .sha256
            default: return nil
            }
        }

        /// The name in `algorithm=` (`MD5`, `SHA-256`).
        var name: String { self == .md5 ? "MD5" : "SHA-256" }

        /// The hash of `text`, in lowercase hex.
        func hash(_ text: String) -> String {
            switch self {
            case .md5: RTSPDigest.hex(Insecure.MD5.hash(data: Array(text.utf8)))
            case .sha256: RTSPDigest.hex(SHA256.hash(data: Array(text.utf8)))
            }
        }
    }

    /// The digest `response` (RFC 7616 clause 3.4.1; RFC 2069 without `qop`).
    static func response(_ algorithm: Algorithm, session: Bool = false, user: String, realm: String, password: String,
                         nonce: String, nc: String, cnonce: String, qop: String?, method: String, uri: String) -> String {
        var a1 = algorithm.hash("\(user):\(realm):\(password)")
        if session { a1 = algorithm.hash("\(a1):\(nonce):\(cnonce)") }
        let a2 = algorithm.hash("\(method):\(uri)")
        guard let qop else { return algorithm.hash("\(a1):\(nonce):\(a2)") }
        return algorithm.hash("\(a1):\(nonce):\(nc):\(cnonce):\(qop):\(a2)")
    }

    /// `bytes` in lowercase hex.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]] }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of hex text (either case); nil for an odd length, another character, or more
    /// than `limit` bytes.
    static func bytes(ofHex text: String, limit: Int) -> [UInt8]? {
        let digits = Array(text.utf8.prefix(2 * limit + 1))
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// The value of one hex digit (either case), or nil.
    static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// True when `a` and `b` hold the same bytes. Values of equal length are compared to the
    /// end (no early exit), so the time taken does not tell where they differ; a length that
    /// differs is no secret (digests and MACs have fixed lengths).
    static func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
