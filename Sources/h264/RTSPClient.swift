import Foundation
import H264

#if canImport(Glibc)
import Glibc
#endif

/// The RTSP 1.0 client side of `h264 receive rtsp://…`: one blocking TCP connection, requests
/// written with `RTSPRequest`, responses and interleaved frames read with `RTSPMessageReader`.
final class RTSPClient {
    /// True once the server closed the connection (or it failed).
    private(set) var isClosed = false
    private let descriptor: Int32
    private var reader = RTSPMessageReader(limits: .init(maximumBodySize: 65_536))
    private var cSeq = 0
    /// Messages read while waiting for a response (interleaved frames), for the caller.
    private var queued: [RTSPMessageReader.Message] = []

    /// Connects to the host and port of `url` (`rtsp://HOST[:PORT]/PATH`, port 554 by default).
    init(url: String) throws {
        let (host, port) = try Self.hostAndPort(of: url)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw CLIError("\(url): cannot resolve \(host) (\(String(cString: gai_strerror(resolved))))")
        }
        defer { freeaddrinfo(list) }
        var connected: Int32 = -1
        var lastErrno: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry, connected < 0 {
            let candidate = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if candidate >= 0 {
                if connect(candidate, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                    connected = candidate
                } else {
                    lastErrno = errno
                    close(candidate)
                }
            }
            entry = info.pointee.ai_next
        }
        guard connected >= 0 else {
            throw CLIError("\(url): cannot connect to \(host):\(port) (\(String(cString: strerror(lastErrno))))")
        }
        descriptor = connected
        var keepAlive: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_KEEPALIVE, &keepAlive, socklen_t(MemoryLayout<Int32>.size))
        signal(SIGPIPE, SIG_IGN)
    }

    deinit { close(descriptor) }

    /// `HOST` and `PORT` of `rtsp://[USER@]HOST[:PORT][/PATH]`; an IPv6 host is in brackets.
    /// Port 0 (any free port) only where `allowingPortZero` (a URL to listen on).
    static func hostAndPort(of url: String, allowingPortZero: Bool = false) throws -> (String, Int) {
        guard url.lowercased().hasPrefix("rtsp://") else { throw CLIError("\(url) is not an rtsp:// URL") }
        var authority = url.dropFirst("rtsp://".count).prefix { $0 != "/" && $0 != "?" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = authority, portText: Substring?
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if rest.hasPrefix(":") { portText = rest.dropFirst() }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { throw CLIError("\(url): no host") }
        guard let portText else { return (String(host), 554) }
        guard let port = Int(portText), ((allowingPortZero ? 0 : 1)...65_535).contains(port) else { throw CLIError("\(url): bad port \(portText)") }
        return (String(host), port)
    }

    /// Sends a request without waiting for its answer.
    func send(_ method: String, uri: String, headers: [(name: String, value: String)] = []) throws {
        cSeq += 1
        let request = RTSPRequest(method: method, uri: uri,
                                  headers: [("CSeq", String(cSeq)), ("User-Agent", "h264 receive")] + headers)
        let bytes = request.bytes
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else {
                if count < 0 && errno == EINTR { continue }
                isClosed = true
                throw CLIError("\(method) \(uri): cannot send (\(String(cString: strerror(errno))))")
            }
            sent += count
        }
    }

    /// Sends a request and returns its 200 answer (interleaved frames read meanwhile are kept
    /// for ``pending()``).
    ///
    /// - Throws: `CLIError` `METHOD URI: CODE Reason` for another status, or when the server
    ///   closes the connection or does not answer within `timeout`.
    func request(_ method: String, uri: String, headers: [(name: String, value: String)] = [],
                 timeout: Duration = .seconds(10)) throws -> RTSPResponse {
        try send(method, uri: uri, headers: headers)
        let expected = String(cSeq)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let messages = try read(timeout: .milliseconds(200)) else {
                throw CLIError("\(method) \(uri): the server closed the connection")
            }
            var answer: RTSPResponse?
            for message in messages {
                if answer == nil, case .response(let response) = message, response.header("CSeq") == expected {
                    answer = response
                } else if case .interleavedFrame = message {
                    queued.append(message)
                }
            }
            if let answer {
                guard answer.status.code == 200 else { throw CLIError("\(method) \(uri): \(answer.status)") }
                return answer
            }
        }
        throw CLIError("\(method) \(uri): no answer within \(timeout)")
    }

    /// The interleaved frames read while waiting for answers, once.
    func pending() -> [RTSPMessageReader.Message] {
        defer { queued = [] }
        return queued
    }

    /// The messages that arrive within `timeout` (possibly none), or nil once the server has
    /// closed the connection.
    ///
    /// - Throws: `CLIError` when the server's bytes are not RTSP.
    func read(timeout: Duration) throws -> [RTSPMessageReader.Message]? {
        guard !isClosed else { return nil }
        var messages: [RTSPMessageReader.Message] = []
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        if poll(&poller, 1, milliseconds) > 0 {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) {
                isClosed = true
                return nil
            }
            if count > 0 { reader.append(buffer[..<count]) }
        }
        do {
            while let message = try reader.next() { messages.append(message) }
        } catch {
            isClosed = true
            throw CLIError("the server's RTSP is malformed: \(error)")
        }
        return messages
    }
}
