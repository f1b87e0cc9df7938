import Crypto
import NIOCore
import NIOSSL

/// What an RTSPS client (`rtsps://`, RTSP over TLS) accepts as the server's certificate.
///
/// Cameras mostly present a certificate they signed themselves (UniFi Protect's RTSPS, for
/// one), which no system root vouches for: trust that certificate (its PEM file, or its
/// SHA-256 fingerprint as `openssl x509 -noout -fingerprint -sha256` prints it) rather than
/// every certificate.
public enum RTSPTLSTrust: Sendable, Hashable {
    /// A certificate that the system's root certificates vouch for, naming the URL's host (or
    /// its IP address). The default.
    case systemRoots
    /// Only a server whose own (leaf) certificate is one of these (each its DER encoding); its
    /// name is not checked, since the certificate itself is trusted.
    case certificates([[UInt8]])
    /// Only a server whose own certificate's DER encoding has this SHA-256 digest (32 bytes);
    /// its name is not checked.
    case fingerprint([UInt8])
    /// Any certificate: the connection is encrypted, but anyone on the path can pose as the
    /// server. What FFmpeg does unless told `-tls_verify 1`.
    case anyCertificate

    /// The trust a command line names: `system` (``systemRoots``), `any` (``anyCertificate``),
    /// `sha256:HEX` (``fingerprint(hex:)``), or else the path of a PEM file
    /// (``certificates(pemFile:)``) — `h264 receive --tls-trust`.
    ///
    /// - Parameter argument: the name.
    /// - Throws: ``RTSPTLSError`` for a fingerprint that is not one, or a file that cannot be read.
    public init(argument: String) throws(RTSPTLSError) {
        self = switch argument {
        case "system": .systemRoots
        case "any": .anyCertificate
        case let trust where trust.lowercased().hasPrefix("sha256:"): try .fingerprint(hex: String(trust.dropFirst(7)))
        case let file: try .certificates(pemFile: file)
        }
    }

    /// Trusts the certificates of a PEM file (one or more `BEGIN CERTIFICATE` blocks).
    ///
    /// - Parameter pemFile: the file's path.
    /// - Throws: ``RTSPTLSError`` when the file cannot be read or holds no certificate.
    public static func certificates(pemFile: String) throws(RTSPTLSError) -> RTSPTLSTrust {
        do {
            let certificates = try NIOSSLCertificate.fromPEMFile(pemFile)
            guard !certificates.isEmpty else { throw RTSPTLSError("\(pemFile): no certificate") }
            return .certificates(try certificates.map { try $0.toDERBytes() })
        } catch let error as RTSPTLSError {
            throw error
        } catch {
            throw RTSPTLSError("\(pemFile): not a PEM certificate file (\(error))")
        }
    }

    /// Trusts the certificate with this SHA-256 fingerprint: 64 hexadecimal digits, in pairs
    /// separated by `:` or not (`AB:CD:…` as OpenSSL prints it, or `abcd…`).
    ///
    /// - Parameter hex: the fingerprint.
    /// - Throws: ``RTSPTLSError`` when it is not 32 bytes in hexadecimal.
    public static func fingerprint(hex: String) throws(RTSPTLSError) -> RTSPTLSTrust {
        let digits = Array(hex.filter { $0 != ":" }.utf8)
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count - 1, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { break }
            bytes.append(high << 4 | low)
        }
        guard digits.count == 64, bytes.count == 32 else {
            throw RTSPTLSError("\(hex) is not a SHA-256 fingerprint (64 hexadecimal digits)")
        }
        return .fingerprint(bytes)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The client's TLS handler for a connection to `host` (an IP address gets no SNI).
    func makeHandler(host: String) throws -> NIOSSLClientHandler {
        var configuration = TLSConfiguration.makeClientConfiguration()
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        switch self {
        case .systemRoots:
            return try NIOSSLClientHandler(context: NIOSSLContext(configuration: configuration), serverHostname: isAddress ? nil : host)
        case .anyCertificate:
            configuration.certificateVerification = .none
            return try NIOSSLClientHandler(context: NIOSSLContext(configuration: configuration), serverHostname: isAddress ? nil : host)
        case .certificates, .fingerprint:
            let trust = self
            return try NIOSSLClientHandler(context: NIOSSLContext(configuration: configuration), serverHostname: isAddress ? nil : host) {
                chain, promise in
                promise.succeed(trust.accepts(leaf: chain.first.flatMap { try? $0.toDERBytes() }) ? .certificateVerified : .failed)
            }
        }
    }

    /// A failed handshake in words: BoringSSL's reason (`CERTIFICATE_VERIFY_FAILED`,
    /// `WRONG_VERSION_NUMBER`) and what it means, from the error the TLS handler caught.
    static func describe(handshakeFailure error: String) -> String {
        let reason = error.range(of: "OPENSSL_internal:").map { error[$0.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" } }
        switch reason {
        case "CERTIFICATE_VERIFY_FAILED": return "the TLS handshake failed: the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED)"
        case "WRONG_VERSION_NUMBER": return "the TLS handshake failed: the server does not speak TLS (WRONG_VERSION_NUMBER)"
        case let reason?: return "the TLS handshake failed (\(reason))"
        case nil: return "the TLS handshake failed (\(error))"
        }
    }

    /// Whether a pinned trust accepts the server's own certificate `leaf` (DER).
    func accepts(leaf: [UInt8]?) -> Bool {
        guard let leaf else { return false }
        switch self {
        case .certificates(let trusted): return trusted.contains(leaf)
        case .fingerprint(let digest): return Array(SHA256.hash(data: leaf)) == digest
        case .systemRoots, .anyCertificate: return true
        }
    }
}

/// An RTSPS server's certificate chain and private key (PEM files), loaded once: what
/// ``RTSPServer/Configuration/tls`` needs to serve `rtsps://` (and ``HLSServer/Configuration/tls``
/// to serve `https://`).
public struct RTSPTLSIdentity: Sendable {
    /// The TLS context every connection's handler is made from.
    let context: NIOSSLContext
    /// The server configuration `context` is made of (for contexts that offer protocols by ALPN).
    let configuration: TLSConfiguration

    /// Loads the certificate chain (the server's certificate first) and its private key.
    ///
    /// - Parameters:
    ///   - certificateChainFile: a PEM file of one or more certificates.
    ///   - privateKeyFile: a PEM file of the first certificate's private key.
    /// - Throws: ``RTSPTLSError`` when a file cannot be read, or the key does not
    ///   belong to the certificate.
    public init(certificateChainFile: String, privateKeyFile: String) throws(RTSPTLSError) {
        let chain: [NIOSSLCertificate], key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateChainFile)
        } catch {
            throw RTSPTLSError("\(certificateChainFile): not a PEM certificate file (\(error))")
        }
        guard !chain.isEmpty else { throw RTSPTLSError("\(certificateChainFile): no certificate") }
        do {
            key = try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)
        } catch {
            throw RTSPTLSError("\(privateKeyFile): not a PEM private key file (\(error))")
        }
        configuration = .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw RTSPTLSError("\(privateKeyFile) does not go with \(certificateChainFile) (\(error))")
        }
    }

    /// A server-side TLS handler for one connection.
    func makeHandler() -> NIOSSLServerHandler { NIOSSLServerHandler(context: context) }

    /// A TLS context of the same identity that offers `protocols` by ALPN, most wanted first
    /// (the HLS server's `h2`, `http/1.1`).
    func context(applicationProtocols protocols: [String]) throws -> NIOSSLContext {
        var offering = configuration
        offering.applicationProtocols = protocols
        return try NIOSSLContext(configuration: offering)
    }
}

/// A TLS certificate, key or fingerprint that cannot be used, with a one-line message naming
/// the file or value.
public struct RTSPTLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message.
    public var description: String

    /// An error with `description`.
    public init(_ description: String) { self.description = description }
}
