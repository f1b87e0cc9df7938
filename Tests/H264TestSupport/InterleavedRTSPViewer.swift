import Foundation
import H264
import H264Streaming

#if canImport(Glibc)
import Glibc
import RTP
#endif

/// The cheapest RTSP viewer there is, for a server's CPU benchmark: DESCRIBE, SETUP with RTP
/// interleaved in the connection (`RTP/AVP/TCP;interleaved=0-1`) and PLAY on a blocking
/// socket, then ``pump(_:for:)`` reads what comes and drops it, counting the RTP packets of
/// channel 0, their bytes and the frames (packets with the marker bit). Many viewers cost the
/// test process one `poll` and one `read` per wakeup each, so that what is measured is the
/// server.
public final class InterleavedRTSPViewer {
    public let fd: Int32
    /// Bytes read after the PLAY answer (RTP and RTCP with their 4-byte interleaved headers).
    public private(set) var bytes = 0
    /// RTP packets (channel 0).
    public private(set) var packets = 0
    /// RTP packets with the marker bit: the last packet of each frame (RFC 6184 clause 5.1).
    public private(set) var frames = 0
    /// Bytes that began no interleaved frame (none from a well-behaved server).
    public private(set) var strayBytes = 0
    public private(set) var open = true
    /// The interleaved header being read: `$`, channel, 16-bit length, and the RTP header's first two bytes.
    private var header: [UInt8] = []
    /// Bytes of the current frame's payload still to skip.
    private var remaining = 0

    /// Connects to 127.0.0.1:`port` and plays `url` (`rtsp://127.0.0.1:PORT/PATH`);
    /// `configure` sets the socket's options before it connects (a receive buffer).
    public init(url: String, port: Int, configure: (Int32) -> Void = { _ in }) throws {
        let (fd, pending) = try Self.play(url: url, port: port, configure: configure)
        self.fd = fd
        count(pending[...])
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    /// The handshake of every benchmark RTSP viewer: connects to 127.0.0.1:`port`, sends
    /// DESCRIBE, SETUP (`RTP/AVP/TCP;interleaved=0-1`) and PLAY on the blocking socket, and
    /// returns it with the bytes read past the PLAY answer (the first interleaved frames).
    public static func play(url: String, port: Int, configure: (Int32) -> Void = { _ in }) throws -> (fd: Int32, pending: [UInt8]) {
        let fd = try LoopbackTCP.connect(port: port, configure: configure)
        do {
            var pending: [UInt8] = []
            let describe = try request(fd, "DESCRIBE \(url)", ["Accept: application/sdp"], cSeq: 1, pending: &pending)
            let sdp = try SessionDescription(parsing: String(decoding: describe.body, as: UTF8.self))
            let control = RTSPURI.resolve(sdp.control, against: describe.headers["content-base"] ?? url)
            let setup = try request(fd, "SETUP \(control)", ["Transport: RTP/AVP/TCP;unicast;interleaved=0-1"], cSeq: 2, pending: &pending)
            let session = String((setup.headers["session"] ?? "").prefix { $0 != ";" })
            let play = try request(fd, "PLAY \(url)", ["Session: \(session)"], cSeq: 3, pending: &pending)
            guard play.status == 200 else { throw LoopbackError("PLAY \(url): \(play.status)") }
            return (fd, pending)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit { close() }

    public func close() {
        guard open else { return }
        open = false
        Glibc.close(fd)
    }

    /// Reads every viewer's socket as data comes, for `duration`, dropping what it reads.
    public static func pump(_ viewers: [InterleavedRTSPViewer], for duration: Duration) {
        let deadline = ContinuousClock.now + duration
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else { return }
            let live = viewers.filter(\.open)
            guard !live.isEmpty else { return }
            var fds = live.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), Int32(max(1, min(remaining / .milliseconds(1), 100)))) > 0 else { continue }
            for (viewer, entry) in zip(live, fds) where entry.revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(viewer.fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    viewer.count(buffer[..<n])
                } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    viewer.close()
                }
            }
        }
    }

    /// Walks the interleaved frames in `chunk`, which continues the previous one.
    private func count(_ chunk: ArraySlice<UInt8>) {
        bytes += chunk.count
        var index = chunk.startIndex
        while index < chunk.endIndex {
            if remaining > 0 {
                let skipped = min(remaining, chunk.endIndex - index)
                index += skipped
                remaining -= skipped
                continue
            }
            let byte = chunk[index]
            index += 1
            if header.isEmpty && byte != UInt8(ascii: "$") {
                strayBytes += 1
                continue
            }
            header.append(byte)
            guard header.count == 6 else { continue }
            // Every RTP and RTCP packet is longer than the two bytes read of it.
            let length = Int(header[2]) << 8 | Int(header[3])
            if header[1] == 0 {
                packets += 1
                if header[5] & 0x80 != 0 { frames += 1 }
            }
            remaining = length - 2
            header.removeAll(keepingCapacity: true)
        }
    }

    /// An answer: status, headers by lowercased name, body.
    private struct Answer {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
    }

    /// Sends `line RTSP/1.0` with `CSeq` and `headers` and reads the answer; bytes read past it
    /// stay in `pending`.
    private static func request(_ fd: Int32, _ line: String, _ headers: [String], cSeq: Int, pending: inout [UInt8]) throws -> Answer {
        let text = ([line + " RTSP/1.0", "CSeq: \(cSeq)", "User-Agent: swift-h264-benchmark"] + headers + ["", ""]).joined(separator: "\r\n")
        let sent = text.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, 0) }
        guard sent == text.utf8.count else { throw LoopbackError("\(line): send: \(errno)") }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            // RTP may come before the PLAY answer (gst-rtsp-server starts sending as the session
            // plays): whole interleaved frames ahead of the answer are dropped (the warm-up).
            while pending.first == UInt8(ascii: "$"), pending.count >= 4, pending.count >= 4 + (Int(pending[2]) << 8 | Int(pending[3])) {
                pending.removeSubrange(..<(4 + (Int(pending[2]) << 8 | Int(pending[3]))))
            }
            if pending.first != UInt8(ascii: "$"), let end = pending.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
                let lines = String(decoding: pending[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                var answer = Answer(status: Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0, headers: [:], body: [])
                for header in lines.dropFirst() {
                    guard let colon = header.firstIndex(of: ":") else { continue }
                    answer.headers[header[..<colon].lowercased()] = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = Int(answer.headers["content-length"] ?? "0") ?? 0
                if pending.count >= end + length {
                    answer.body = Array(pending[end..<(end + length)])
                    pending.removeSubrange(..<(end + length))
                    guard answer.status == 200 else { throw LoopbackError("\(line): \(lines[0])") }
                    return answer
                }
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw LoopbackError("\(line): the server closed the connection") }
            pending += buffer[..<n]
        }
    }
}
