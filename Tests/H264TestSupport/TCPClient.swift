import Foundation
public import H264

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A raw TCP viewer: records the bytes with their arrival times and cuts them into access
/// units with `AccessUnitReceiver`. Arrival times are the kernel's receive timestamps
/// (`SO_TIMESTAMPNS`), so a busy test process reading late does not skew them.
public final class TCPClient {
    public let fd: Int32
    /// When `connect` returned, in seconds of `CLOCK_REALTIME` (the clock of the timestamps).
    public let connectedAt: Double
    public private(set) var bytes: [UInt8] = []
    /// (end offset of a chunk, when its last segment arrived)
    public private(set) var arrivals: [(end: Int, at: Double)] = []
    public private(set) var receiver = AccessUnitReceiver()
    public private(set) var accessUnits: [AccessUnit] = []
    public private(set) var open = true
    /// How many reads came with a kernel timestamp (all of them, on Linux).
    public private(set) var timestampedReads = 0

    /// Linux `SO_TIMESTAMPNS` (= `SCM_TIMESTAMPNS`), with 64-bit `timespec` on x86_64/arm64.
    private static let timestampOption: Int32 = 35

    public static func realtimeNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    public init(port: Int, receiveBufferSize: Int32? = nil) throws {
        fd = try LoopbackTCP.connect(port: port) { fd in
            if var size = receiveBufferSize {
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            var on: Int32 = 1
            setsockopt(fd, SOL_SOCKET, Self.timestampOption, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        connectedAt = Self.realtimeNow()
    }

    deinit { if open { Glibc.close(fd) } }

    /// Reads what is there (the socket is readable), 4 KiB at a time: the kernel reports the
    /// receive time of the last segment a read copied from, so a read dates its bytes to within
    /// about a picture even when the test process reads late. (Smaller reads date them more
    /// finely but cost the debug-built test enough to fall behind 20 viewers and stall them.)
    func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var control = [UInt8](repeating: 0, count: 128)
        var at: Double?
        let n = buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    let n = recvmsg(fd, &message, 0)
                    // cmsghdr: size_t cmsg_len, int cmsg_level, int cmsg_type; data 8-aligned.
                    var offset = 0
                    let header = MemoryLayout<Int>.size + 8
                    while n > 0, offset + header <= message.msg_controllen {
                        let length = controlBytes.load(fromByteOffset: offset, as: Int.self)
                        let level = controlBytes.load(fromByteOffset: offset + MemoryLayout<Int>.size, as: Int32.self)
                        let type = controlBytes.load(fromByteOffset: offset + MemoryLayout<Int>.size + 4, as: Int32.self)
                        guard length >= header else { break }
                        if level == SOL_SOCKET, type == Self.timestampOption, length >= header + 16 {
                            let seconds = controlBytes.load(fromByteOffset: offset + header, as: Int.self)
                            let nanoseconds = controlBytes.load(fromByteOffset: offset + header + 8, as: Int.self)
                            at = Double(seconds) + Double(nanoseconds) / 1e9
                        }
                        offset += (length + 7) & ~7
                    }
                    return n
                }
            }
        }
        guard n > 0 else { open = false; Glibc.close(fd); return }
        let chunk = buffer[0..<n]
        bytes += chunk
        if at != nil { timestampedReads += 1 }
        arrivals.append((bytes.count, at ?? Self.realtimeNow()))
        if firstIDROffset == nil {
            firstIDROffset = AnnexB.nalUnits(in: bytes).first { bytes[$0.range.lowerBound] & 0x1F == 5 }?.range.lowerBound
        }
        for event in receiver.receive(chunk) {
            if case .accessUnit(let unit) = event { accessUnits.append(unit) }
        }
    }

    /// Reads from every open client until `done` or the deadline (then it throws).
    ///
    /// The viewers stand for other machines, so a measurement reads them with `readerNice`
    /// (e.g. the server's nice value, where allowed; the thread's own again afterwards). They
    /// must keep up, or the kernel's arrival times show the reader's lag instead of the
    /// server's pace: the sender waits once the TCP window is full, and segments that wait in a
    /// receive queue are merged and stamped with the latest arrival. (Seen here: twelve busy
    /// processes beside the debug-built test put 20 viewers 2 s behind, and their rates read 20
    /// to 47 fps while a Python reader of the same server at nice −10 saw 30 fps with no gap.)
    public static func pump(_ clients: [TCPClient], deadline: ContinuousClock.Instant, readerNice: Int32? = nil,
                            until done: () -> Bool) throws {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let ownNice = getpriority(which, 0) // 0: the calling thread, on Linux
        let raised = readerNice.map { errno == 0 && ownNice > $0 && setpriority(which, 0, $0) == 0 } ?? false
        defer { if raised { _ = setpriority(which, 0, ownNice) } }
        while !done() {
            let live = clients.filter(\.open)
            guard !live.isEmpty else { throw LoopbackError("every connection closed") }
            let remaining = deadline - .now
            guard remaining > .zero else { throw LoopbackError("timed out; access units: \(clients.map(\.accessUnits.count))") }
            var fds = live.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ms = Int32(min(remaining / .milliseconds(1), 100))
            let ready = poll(&fds, nfds_t(fds.count), ms)
            guard ready > 0 else { continue }
            for (client, entry) in zip(live, fds) where entry.revents != 0 { client.readAvailable() }
        }
    }

    /// An abrupt disconnect: SO_LINGER 0 makes close send a reset.
    public func reset() {
        guard open else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    public func close() {
        guard open else { return }
        open = false
        Glibc.close(fd)
    }

    /// When the byte at `offset` arrived.
    public func arrival(of offset: Int) -> Double? {
        arrivals.first { $0.end > offset }?.at
    }

    /// The types of the first three NAL units received.
    public var firstNALUnitTypes: [UInt8] {
        AnnexB.nalUnits(in: bytes).prefix(3).map { bytes[$0.range.lowerBound] & 0x1F }
    }

    /// Where the first IDR slice's NAL unit begins, once its header byte has arrived. Found once
    /// by `readAvailable` (scanning only what arrived before it), not at every poll: the pump's
    /// conditions ask for it for 50 clients at a time, and a debug-built scan of everything
    /// received would take CPU time from the server being measured.
    public private(set) var firstIDROffset: Int?
}

/// A socket problem of a test peer on loopback (``TCPClient``, the RTP tests' UDP socket).
public struct LoopbackError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
