import Foundation
import H264
@testable import H264Streaming
import H264TestSupport

#if canImport(Glibc)
import Glibc
import RTSPMessages
#endif

/// One abusive connection to an RTSP server on 127.0.0.1 (for `AbusiveConnectionsTests`), of
/// one of four kinds, each returning what the server did to it.
enum AbusiveClient: CaseIterable {
    /// Random bytes, then a blank line: the server answers an error status (or closes).
    case garbage
    /// A DESCRIBE whose header lines never end: the server closes the connection.
    case endlessHeaders
    /// DESCRIBE after DESCRIBE with a wrong Digest password on one connection: every one 401.
    case wrongPasswords
    /// A viewer that authenticates, plays over TCP and never reads, for `slowReaderHold` seconds.
    case slowReader

    /// How many requests a `wrongPasswords` connection sends.
    static let wrongPasswordRequests = 20
    /// How long a slow reader holds its connection without reading.
    static let slowReaderHold = 5.0

    /// What the server did.
    enum Outcome: Equatable {
        /// It answered (the first status).
        case answered(Int)
        /// It closed the connection, within `seconds`.
        case closed(seconds: Double)
        /// All `count` requests got 401.
        case refused(count: Int)
        /// The stream played (PLAY answered 200) and the connection was held.
        case played
        /// Something else: what.
        case failed(String)
    }

    /// Runs abuser number `index` of this kind against `url` (`rtsp://127.0.0.1:PORT/live`,
    /// the server requiring user `user` with password `password`).
    func run(url: String, port: Int, index: Int, user: String, password: String) -> Outcome {
        do {
            switch self {
            case .garbage: return try Self.garbage(port: port, seed: UInt64(index))
            case .endlessHeaders: return try Self.endlessHeaders(url: url, port: port)
            case .wrongPasswords: return try Self.wrongPasswords(url: url, port: port, user: user)
            case .slowReader: return try Self.slowReader(url: url, port: port, user: user, password: password)
            }
        } catch {
            return .failed("\(error)")
        }
    }

    private static func garbage(port: Int, seed: UInt64) throws -> Outcome {
        let connection = try RTSPPeerTests.Connection(port: port)
        var random = SplitMix64(seed: seed)
        var bytes = (0..<1024).map { _ in UInt8.random(in: 0...255, using: &random) }
        bytes[0] = UInt8(ascii: "G") // not `$`, which would begin an interleaved frame
        guard send(bytes + Array("\r\n\r\n".utf8), on: connection.descriptor) else { return .failed("send") }
        let started = Date()
        return connection.response().map { .answered($0.status) } ?? .closed(seconds: Date().timeIntervalSince(started))
    }

    private static func endlessHeaders(url: String, port: Int) throws -> Outcome {
        let connection = try RTSPPeerTests.Connection(port: port)
        let started = Date()
        guard send(Array("DESCRIBE \(url) RTSP/1.0\r\nCSeq: 1\r\n".utf8), on: connection.descriptor) else { return .failed("send") }
        var line = 0
        // Header lines until the server has had enough (a send fails once it has closed).
        while Date().timeIntervalSince(started) < 10 {
            line += 1
            guard send(Array("X-Filler-\(line): \(String(repeating: "a", count: 64))\r\n".utf8), on: connection.descriptor) else {
                return .closed(seconds: Date().timeIntervalSince(started))
            }
            if line % 64 == 0, !connection.receiveAvailable() { return .closed(seconds: Date().timeIntervalSince(started)) }
        }
        return .failed("still open after \(line) header lines")
    }

    private static func wrongPasswords(url: String, port: Int, user: String) throws -> Outcome {
        let connection = try RTSPPeerTests.Connection(port: port)
        guard let challenge = connection.request("DESCRIBE \(url) RTSP/1.0\r\nCSeq: 1\r\n\r\n"), challenge.status == 401,
              let header = challenge.headers["www-authenticate"] else { return .failed("no challenge") }
        var authenticator = RTSPAuthenticator(credentials: RTSPCredentials(user: user, password: "wrong"))
        _ = authenticator.unauthorized(by: RTSPAuthenticationChallenge.parse(header), sentAuthorization: false, retriedStale: false)
        let requests = (1...wrongPasswordRequests).map { cSeq in
            "DESCRIBE \(url) RTSP/1.0\r\nCSeq: \(cSeq + 1)\r\nAuthorization: \(authenticator.authorization(method: "DESCRIBE", uri: url) ?? "")\r\n\r\n"
        }
        connection.send(requests.joined())
        return .refused(count: (1...wrongPasswordRequests).filter { _ in connection.response()?.status == 401 }.count)
    }

    private static func slowReader(url: String, port: Int, user: String, password: String) throws -> Outcome {
        let connection = try RTSPPeerTests.Connection(port: port, receiveBufferSize: 4096)
        guard let challenge = connection.request("DESCRIBE \(url) RTSP/1.0\r\nCSeq: 1\r\n\r\n"), challenge.status == 401,
              let header = challenge.headers["www-authenticate"] else { return .failed("no challenge") }
        var authenticator = RTSPAuthenticator(credentials: RTSPCredentials(user: user, password: password))
        _ = authenticator.unauthorized(by: RTSPAuthenticationChallenge.parse(header), sentAuthorization: false, retriedStale: false)
        func request(_ method: String, _ uri: String, _ cSeq: Int, _ headers: String) -> (status: Int, headers: [String: String])? {
            let authorization = authenticator.authorization(method: method, uri: uri) ?? ""
            return connection.request("\(method) \(uri) RTSP/1.0\r\nCSeq: \(cSeq)\r\nAuthorization: \(authorization)\r\n\(headers)\r\n")
        }
        guard request("DESCRIBE", url, 2, "")?.status == 200 else { return .failed("DESCRIBE with the password") }
        guard let setup = request("SETUP", url + "/track1", 3, "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n"), setup.status == 200,
              let session = setup.headers["session"]?.split(separator: ";").first else { return .failed("SETUP") }
        guard request("PLAY", url, 4, "Session: \(session)\r\n")?.status == 200 else { return .failed("PLAY") }
        Thread.sleep(forTimeInterval: slowReaderHold) // the abuse: reading nothing
        return .played
    }

    /// Sends all of `bytes`; false when the connection is gone.
    private static func send(_ bytes: [UInt8], on descriptor: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
