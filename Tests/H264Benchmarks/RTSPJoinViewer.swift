import Foundation
import H264TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// An RTSP viewer (TCP interleaved) that knows where it is in the GOP and when it could first
/// decode: it reads the RTP packets of channel 0 whole, groups them into access units (up to
/// the packet with the marker bit, RFC 6184 clause 5.1) and notes the monotonic time at which
/// the last byte of its first complete IDR access unit was read — one whose first packet
/// starts a NAL unit (a single NAL unit, a STAP-A, or an FU-A with its start bit) and that
/// holds NAL unit type 5, alone, in a STAP-A or in an FU-A. The handshake is
/// ``InterleavedRTSPViewer/play(url:port:configure:)``; ``describing`` is taken just before it.
final class RTSPJoinViewer {
    let fd: Int32
    /// Monotonic nanoseconds (``Bench/now()``) just before the DESCRIBE was sent.
    let describing: UInt64
    /// Monotonic nanoseconds at which the last byte of the first complete IDR access unit was read.
    private(set) var firstFrameAt: UInt64?
    /// Complete access units seen since the last complete IDR access unit (0: the last was
    /// one); nil until one has come.
    private(set) var gopPosition: Int?
    /// Access units (packets with the marker bit) so far.
    private(set) var accessUnits = 0
    private(set) var open = true
    /// Unparsed bytes: the start of an interleaved frame whose end has not come yet.
    private var buffer: [UInt8] = []
    /// The access unit being read: did its first packet start a NAL unit, does it hold an IDR slice.
    private var unitStarted: Bool?
    private var unitHasIDR = false

    /// Connects to 127.0.0.1:`port` and plays `url`.
    init(url: String, port: Int) throws {
        describing = Bench.now()
        let (fd, pending) = try InterleavedRTSPViewer.play(url: url, port: port)
        self.fd = fd
        take(pending, at: Bench.now())
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { close() }

    func close() {
        guard open else { return }
        open = false
        Glibc.close(fd)
    }

    /// Milliseconds from the DESCRIBE to the first complete IDR access unit.
    var joinMilliseconds: Double? { firstFrameAt.map { Double($0 - describing) / 1e6 } }

    /// Reads every viewer's socket as data comes until `condition` holds; throws after `timeout`.
    static func pump(_ viewers: [RTSPJoinViewer], timeout: Duration, until condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !condition() {
            let remaining = deadline - .now
            guard remaining > .zero else { throw LoopbackError("RTSPJoinViewer: no condition after \(timeout)") }
            let live = viewers.filter(\.open)
            guard !live.isEmpty else { throw LoopbackError("RTSPJoinViewer: every viewer closed") }
            var fds = live.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), Int32(max(1, min(remaining / .milliseconds(1), 100)))) > 0 else { continue }
            for (viewer, entry) in zip(live, fds) where entry.revents != 0 {
                let n = chunk.withUnsafeMutableBytes { read(viewer.fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    viewer.take(chunk[..<n], at: Bench.now())
                } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    viewer.close()
                }
            }
        }
    }

    /// Appends `bytes` (read at `time`) and handles every interleaved frame now whole.
    private func take<Bytes: Collection<UInt8>>(_ bytes: Bytes, at time: UInt64) {
        buffer.append(contentsOf: bytes)
        var index = 0
        while buffer.count - index >= 4 {
            guard buffer[index] == UInt8(ascii: "$") else {
                index += 1 // not an interleaved frame: none comes from a well-behaved server
                continue
            }
            let length = Int(buffer[index + 2]) << 8 | Int(buffer[index + 3])
            guard buffer.count - index >= 4 + length else { break }
            if buffer[index + 1] == 0 { packet(buffer[(index + 4)..<(index + 4 + length)], at: time) }
            index += 4 + length
        }
        buffer.removeSubrange(..<index)
    }

    /// One RTP packet of the video.
    private func packet(_ rtp: ArraySlice<UInt8>, at time: UInt64) {
        guard rtp.count >= 12 else { return }
        let first = rtp.startIndex
        var payload = first + 12 + 4 * Int(rtp[first] & 0x0F)
        if rtp[first] & 0x10 != 0, payload + 4 <= rtp.endIndex { // header extension
            payload += 4 + 4 * (Int(rtp[payload + 2]) << 8 | Int(rtp[payload + 3]))
        }
        let marker = rtp[first + 1] & 0x80 != 0
        if payload < rtp.endIndex {
            let type = rtp[payload] & 0x1F
            switch type {
            case 28 where payload + 1 < rtp.endIndex: // FU-A
                let header = rtp[payload + 1]
                if unitStarted == nil { unitStarted = header & 0x80 != 0 }
                if header & 0x1F == 5 { unitHasIDR = true }
            case 24: // STAP-A: 16-bit sizes, each followed by a NAL unit
                if unitStarted == nil { unitStarted = true }
                var at = payload + 1
                while at + 2 < rtp.endIndex {
                    let size = Int(rtp[at]) << 8 | Int(rtp[at + 1])
                    if rtp[at + 2] & 0x1F == 5 { unitHasIDR = true }
                    at += 2 + size
                }
            default:
                if unitStarted == nil { unitStarted = true }
                if type == 5 { unitHasIDR = true }
            }
        }
        guard marker else { return }
        accessUnits += 1
        if unitStarted == true && unitHasIDR {
            gopPosition = 0
            if firstFrameAt == nil { firstFrameAt = time }
        } else if let position = gopPosition {
            gopPosition = position + 1
        }
        unitStarted = nil
        unitHasIDR = false
    }
}
