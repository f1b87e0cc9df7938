import Foundation
import H264
@testable import h264
import H264TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `h264 serve` on loopback (127.0.0.1 only), each test bounded in time: the server is a
/// subprocess on a free port (`--port 0`, read from its first line), stopped with SIGTERM at
/// the end (which must exit 0). Clients are FFmpeg (`-i tcp://…`) and raw sockets whose bytes
/// go through the library's `AccessUnitReceiver` and then FFmpeg.
@Suite(.serialized) struct ServeTests {
    /// Committed fixture Fixtures/cars_320x240_30f.y4m (see Fixtures/PROVENANCE): 30 fps.
    static let y4m = TestFixtures.url("cars_320x240_30f.y4m").path
    static let frameInterval = 1.0 / 30
    static let frameBytes = 320 * 240 * 3 / 2
    /// The encoder settings of these tests: x264 `ultrafast` on one thread needs about a
    /// millisecond per 320×240 frame, so the server keeps its pace when the rest of the test
    /// suite loads both cores (a single light thread gets its share of the CPU where several
    /// x264 threads would each queue behind the suite's many threads).
    static let light = ["--speed", "ultrafast", "--threads", "1"]

    /// True in a ThreadSanitizer or AddressSanitizer build (CI runs the suite in both). The
    /// server is then instrumented too and several times slower, so real-time figures (first-IDR
    /// latency, frame rate) are only checked in the plain build; everything else is checked
    /// in every build.
    static let sanitized: Bool = {
        let handle = dlopen(nil, RTLD_NOW)
        defer { if let handle { dlclose(handle) } }
        return dlsym(handle, "__tsan_init") != nil || dlsym(handle, "__asan_init") != nil
    }()

    /// Three FFmpeg viewers and three raw viewers join at 0 s, about 1.3 s and about 2.7 s (when
    /// the first raw viewer has 39 and 81 pictures). Each records 45 pictures: its first NAL
    /// units are SPS, PPS, IDR; the IDR arrives within two frame intervals of connecting; the
    /// bytes decode with zero FFmpeg errors from the first byte; pictures arrive at 30 fps ±10%.
    @Test func viewersJoiningLateGetACleanStreamAtTheInputRate() throws {
        let server = try ServeProcess(["--loop", "--quiet"] + Self.light)
        defer { server.kill() }
        var raw = [try TCPClient(port: server.port)]
        var ffmpeg = [try FFmpegViewer(port: server.port)]
        for joinAt in [39, 81] {
            try TCPClient.pump(raw, deadline: .now + .seconds(10)) { raw[0].accessUnits.count >= joinAt }
            raw.append(try TCPClient(port: server.port))
            ffmpeg.append(try FFmpegViewer(port: server.port))
        }
        try TCPClient.pump(raw, deadline: .now + .seconds(10)) { raw.allSatisfy { $0.accessUnits.count >= 46 } }
        for (n, client) in raw.enumerated() {
            try client.checkCleanStart(pictures: 45, label: "raw viewer \(n)")
            client.close()
        }
        for (n, viewer) in ffmpeg.enumerated() {
            let result = try viewer.wait(timeout: .seconds(20))
            #expect(result.status == 0, "FFmpeg viewer \(n): \(result.stderr)")
            #expect(result.stderr.isEmpty, "FFmpeg viewer \(n): \(result.stderr)")
            #expect(result.outputBytes == 45 * Self.frameBytes, "FFmpeg viewer \(n)")
        }
        #expect(server.stop() == 0)
    }

    /// 50 viewers at once (one IDR shared by those joining together), 15 then reset their
    /// connection, 10 close it, 5 stop reading; the other 20 keep being served at the input rate,
    /// and a fresh viewer afterwards still gets a clean stream. The server then stops cleanly.
    @Test func fiftyViewersSomeDroppingAbruptly() throws {
        let server = try ServeProcess(["--loop"] + Self.light)
        defer { server.kill() }
        let clients = try (0..<50).map { _ in try TCPClient(port: server.port) }
        try TCPClient.pump(clients, deadline: .now + .seconds(10)) { clients.allSatisfy { $0.firstIDROffset != nil } }
        for (n, client) in clients.enumerated() {
            #expect(client.firstNALUnitTypes == [7, 8, 5], "viewer \(n)")
        }
        for client in clients[0..<15] { client.reset() }
        for client in clients[15..<25] { client.close() }
        let stalled = clients[25..<30]
        let readers = Array(clients[30...])
        let counts = readers.map(\.accessUnits.count)
        try TCPClient.pump(readers, deadline: .now + .seconds(10)) {
            zip(readers, counts).allSatisfy { $0.accessUnits.count >= $1 + 61 }
        }
        for (n, client) in readers.enumerated() {
            try client.checkRate(from: counts[n], pictures: 60, label: "reader \(n)")
            try client.checkDecodes(label: "reader \(n)")
        }
        let fresh = try TCPClient(port: server.port)
        try TCPClient.pump([fresh], deadline: .now + .seconds(10)) { fresh.accessUnits.count >= 61 }
        try fresh.checkCleanStart(pictures: 60, label: "fresh viewer")
        for client in readers + Array(stalled) + [fresh] { client.close() }
        server.expectThreadsAtItsPriority()
        #expect(server.stop() == 0)
        #expect(server.stderr.contains("served "), "\(server.stderr.suffix(500))")
        #expect(server.stderr.contains("to 51 clients"), "\(server.stderr.suffix(500))")
    }

    /// A viewer that stops reading (small kernel buffers, a queue of 4 frames) is skipped to an
    /// IDR: what it receives still decodes without error and restarts at SPS, PPS and IDR,
    /// while a viewer beside it keeps the input rate.
    @Test func slowViewerIsSkippedToTheNextIDR() throws {
        let server = try ServeProcess(["--loop", "--client-queue-frames", "4", "--send-buffer-size", "4096",
                                       "--bitrate", "4000000", "--max-keyframe-interval-duration", "10"] + Self.light)
        defer { server.kill() }
        let slow = try TCPClient(port: server.port, receiveBufferSize: 4096)
        let fast = try TCPClient(port: server.port)
        try TCPClient.pump([fast], deadline: .now + .seconds(10)) { fast.accessUnits.count >= 40 }
        let before = fast.accessUnits.count
        try TCPClient.pump([fast, slow], deadline: .now + .seconds(10)) { fast.accessUnits.count >= before + 61 }
        try fast.checkRate(from: before, pictures: 60, label: "fast viewer")
        try fast.checkDecodes(label: "fast viewer")
        #expect(server.stderr.contains("skipped to the next IDR"), "\(server.stderr)")
        #expect(slow.firstNALUnitTypes == [7, 8, 5])
        #expect(slow.accessUnits.filter(\.isIDR).count >= 2, "the slow viewer resumed at a later IDR")
        #expect(slow.receiver.skippedAccessUnitCount == 0 && slow.receiver.missingParameterSetCount == 0)
        #expect(slow.accessUnits.count < fast.accessUnits.count)
        try slow.checkDecodes(label: "slow viewer")
        fast.close()
        slow.close()
        #expect(server.stop() == 0)
    }

    @Test func badArgumentsFail() throws {
        #expect(try CLI.run(["serve", Self.y4m, "--port", "70000"]).status != 0)
        #expect(try CLI.run(["serve", "-", "--port", "0", "--loop"]).status != 0)
        #expect(try CLI.run(["serve", "/nonexistent.y4m", "--port", "0"]).status != 0)
    }
}

/// `h264 serve Fixtures/cars_320x240_30f.y4m --port 0 …` as a subprocess.
final class ServeProcess: Sendable {
    /// The server's nice value: it shares the machine with a parallel test suite.
    static let nice: Int32 = -10
    let process: Process
    let port: Int
    private let log = LogBuffer()

    init(_ arguments: [String]) throws {
        _ = ignoreSIGPIPE
        process = Process()
        // A live server is deployed with the priority it needs; here it shares 2 cores with the
        // whole parallel test suite, so it runs at nice -10 where that is allowed (root, as in
        // CI; otherwise nice says so on standard error and runs it at normal priority), all
        // of its threads (`ProcessPriority`). `nice` execs the server: the process id stays
        // the server's.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/nice")
        process.arguments = ["-n", String(Self.nice), CLI.executable.path, "serve", ServeTests.y4m, "--port", "0"] + arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let listening = DispatchSemaphore(value: 0)
        let handle = err.fileHandleForReading
        try process.run()
        let log = self.log.text
        Thread.detachNewThread {
            var signalled = false
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                log.append(String(decoding: data, as: UTF8.self))
                if !signalled, log.read({ $0.contains("listening on") && $0.contains("\n") }) {
                    signalled = true
                    listening.signal()
                }
            }
            if !signalled { listening.signal() }
        }
        _ = listening.wait(timeout: .now() + 30)
        let text = log.read { $0 }
        guard let range = text.range(of: "tcp://127.0.0.1:"),
              let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            process.terminate()
            throw ServeTestError("h264 serve did not start: \(text)")
        }
        self.port = port
    }

    var stderr: String { log.text.read { $0 } }

    /// Every thread of the server runs at the nice value it was started with (`ProcessPriority`:
    /// libdispatch on Linux would keep its workers, which run the encoder, at 0 or −4). The
    /// server adopts new threads once a second, so this waits up to 3 s for one created since.
    /// Only where `nice -n -10` was allowed (root, as in CI): otherwise the first thread is at 0
    /// and there is nothing to follow.
    func expectThreadsAtItsPriority() {
        let pid = process.processIdentifier
        func niceValues() -> [Int32] { Array(ProcessPriority.threadNiceValues(of: pid).values) }
        guard ProcessPriority.threadNiceValues(of: pid)[id_t(pid)] == Self.nice else { return }
        let deadline = ContinuousClock.now + .seconds(3)
        var values = niceValues()
        while values.contains(where: { $0 != Self.nice }), ContinuousClock.now < deadline {
            // Polls /proc: the server gives no signal when it has adopted a thread.
            usleep(50_000)
            values = niceValues()
        }
        #expect(values.count > 1 && values.allSatisfy { $0 == Self.nice }, "nice values of the server's threads: \(values)")
    }

    /// SIGTERM, then the exit status (waits at most 10 s; -1 if it did not exit).
    func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        let exited = DispatchSemaphore(value: 0)
        let process = self.process
        Thread.detachNewThread { process.waitUntilExit(); exited.signal() }
        process.terminate()
        guard exited.wait(timeout: .now() + 10) == .success else { return -1 }
        return process.terminationStatus
    }

    /// Ends the process whatever happened (test cleanup).
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}

/// Standard error collected by a reading thread.
final class LogBuffer: Sendable {
    /// Guarded by an `NSLock` (a pthread mutex, which ThreadSanitizer sees; it does not see
    /// `Synchronization.Mutex` on Linux).
    final class Text: @unchecked Sendable {
        private let lock = NSLock()
        private var storage = ""
        func append(_ more: String) { lock.lock(); storage += more; lock.unlock() }
        func read<T>(_ body: (String) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(storage) }
    }
    let text = Text()
}

struct ServeTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

/// `ffmpeg -f h264 -i tcp://127.0.0.1:PORT -frames:v 45` decoding to raw video in a file.
final class FFmpegViewer {
    let process = Process()
    let output: URL
    let errors: URL

    init(port: Int) throws {
        let dir = try CLI.temporaryDirectory()
        output = dir.appendingPathComponent("out.yuv")
        errors = dir.appendingPathComponent("err.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Small probe: a live raw H.264 stream has no header worth waiting 5 s for.
        process.arguments = ["ffmpeg", "-nostdin", "-v", "error", "-probesize", "32", "-analyzeduration", "0", "-f", "h264",
                             "-i", "tcp://127.0.0.1:\(port)", "-frames:v", "45", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-y", output.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    func wait(timeout: Duration) throws -> (status: Int32, stderr: String, outputBytes: Int) {
        let exited = DispatchSemaphore(value: 0)
        let process = self.process
        Thread.detachNewThread { process.waitUntilExit(); exited.signal() }
        if exited.wait(timeout: .now() + Double(timeout.components.seconds)) != .success {
            process.terminate()
            _ = exited.wait(timeout: .now() + 5)
        }
        let stderr = String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self)
        let size = (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
        try? FileManager.default.removeItem(at: output.deletingLastPathComponent())
        return (process.isRunning ? -1 : process.terminationStatus, stderr, size)
    }
}

/// A raw TCP viewer: records the bytes with their arrival times and cuts them into access
/// units with `AccessUnitReceiver`. Arrival times are the kernel's receive timestamps
/// (`SO_TIMESTAMPNS`), so a busy test process reading late does not skew them.
final class TCPClient {
    let fd: Int32
    /// When `connect` returned, in seconds of `CLOCK_REALTIME` (the clock of the timestamps).
    let connectedAt: Double
    private(set) var bytes: [UInt8] = []
    /// (end offset of a chunk, when its last segment arrived)
    private(set) var arrivals: [(end: Int, at: Double)] = []
    private(set) var receiver = AccessUnitReceiver()
    private(set) var accessUnits: [AccessUnit] = []
    private(set) var open = true
    /// How many reads came with a kernel timestamp (all of them, on Linux).
    private(set) var timestampedReads = 0

    /// Linux `SO_TIMESTAMPNS` (= `SCM_TIMESTAMPNS`), with 64-bit `timespec` on x86_64/arm64.
    private static let timestampOption: Int32 = 35

    static func realtimeNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    init(port: Int, receiveBufferSize: Int32? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw ServeTestError("socket: \(errno)") }
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, Self.timestampOption, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { Glibc.close(fd); throw ServeTestError("connect: \(errno)") }
        connectedAt = Self.realtimeNow()
    }

    deinit { if open { Glibc.close(fd) } }

    /// Reads what is there (the socket is readable), 4 KiB at a time: the kernel reports the
    /// receive time of the last segment a read copied from, so a read dates its bytes to within
    /// about a picture even when the test process reads late. (Smaller reads date them more
    /// finely but cost the debug-built test enough to fall behind 20 viewers and stall them.)
    fileprivate func readAvailable() {
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
    /// The viewers stand for other machines, so while they read, the reading thread runs at the
    /// server's priority (nice −10, where allowed; its own again afterwards). They must keep
    /// up, or the kernel's arrival times show the reader's lag instead of the server's pace:
    /// the sender waits once the TCP window is full, and segments that wait in a receive queue
    /// are merged and stamped with the latest arrival. (Seen here: twelve busy processes beside
    /// the debug-built test put 20 viewers 2 s behind, and their rates read 20 to 47 fps while
    /// a Python reader of the same server at nice −10 saw 30 fps with no gap.)
    static func pump(_ clients: [TCPClient], deadline: ContinuousClock.Instant, until done: () -> Bool) throws {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let ownNice = getpriority(which, 0) // 0: the calling thread, on Linux
        let raised = errno == 0 && ownNice > ServeProcess.nice && setpriority(which, 0, ServeProcess.nice) == 0
        defer { if raised { _ = setpriority(which, 0, ownNice) } }
        while !done() {
            let live = clients.filter(\.open)
            guard !live.isEmpty else { throw ServeTestError("every connection closed") }
            let remaining = deadline - .now
            guard remaining > .zero else { throw ServeTestError("timed out; access units: \(clients.map(\.accessUnits.count))") }
            var fds = live.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ms = Int32(min(remaining / .milliseconds(1), 100))
            let ready = poll(&fds, nfds_t(fds.count), ms)
            guard ready > 0 else { continue }
            for (client, entry) in zip(live, fds) where entry.revents != 0 { client.readAvailable() }
        }
    }

    /// An abrupt disconnect: SO_LINGER 0 makes close send a reset.
    func reset() {
        guard open else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    func close() {
        guard open else { return }
        open = false
        Glibc.close(fd)
    }

    /// When the byte at `offset` arrived.
    func arrival(of offset: Int) -> Double? {
        arrivals.first { $0.end > offset }?.at
    }

    /// The types of the first three NAL units received.
    var firstNALUnitTypes: [UInt8] {
        AnnexB.nalUnits(in: bytes).prefix(3).map { bytes[$0.range.lowerBound] & 0x1F }
    }

    /// Where the first IDR slice's NAL unit begins, once its header byte has arrived. Found once
    /// by `readAvailable` (scanning only what arrived before it), not at every poll: the pump's
    /// conditions ask for it for 50 clients at a time, and a debug-built scan of everything
    /// received would take CPU time from the server being measured.
    private(set) var firstIDROffset: Int?

    /// The stream from its first byte: SPS, PPS, IDR first, the IDR within two frame intervals
    /// of connecting, `pictures` access units decoding without error, at the input rate.
    func checkCleanStart(pictures: Int, label: String) throws {
        #expect(firstNALUnitTypes == [7, 8, 5], "\(label)")
        #expect(timestampedReads == arrivals.count, "\(label): kernel receive timestamps")
        #expect(receiver.skippedByteCount == 0 && receiver.skippedAccessUnitCount == 0, "\(label)")
        if let idr = firstIDROffset, let at = arrival(of: idr) {
            let latency = at - connectedAt
            if !ServeTests.sanitized { #expect(latency <= 2 * ServeTests.frameInterval, "\(label): first IDR after \(latency) s") }
        } else {
            Issue.record("\(label): no IDR")
        }
        try checkRate(from: 0, pictures: pictures, label: label)
        try checkDecodes(upTo: pictures, label: label)
    }

    /// Pictures `first` ..< `first + pictures` arrived at 30 fps ±10%: the median of the rates
    /// over three consecutive runs of them (each measured between the arrivals of first bytes),
    /// so that one stall of a loaded host, which the server's absolute deadlines then catch up
    /// on, does not decide the figure; a server that is steadily slow or fast still fails.
    func checkRate(from first: Int, pictures: Int, label: String) throws {
        try #require(accessUnits.count >= first + pictures, "\(label)")
        let intervals = (pictures - 1) / 3
        var rates: [Double] = []
        for run in 0..<3 {
            let from = first + run * intervals
            guard let start = arrival(of: accessUnits[from].streamOffset),
                  let end = arrival(of: accessUnits[from + intervals].streamOffset) else {
                Issue.record("\(label): no arrival times"); return
            }
            rates.append(Double(intervals) / (end - start))
        }
        let rate = rates.sorted()[1]
        if !ServeTests.sanitized { #expect(abs(rate - 30) <= 3, "\(label): \(rates) pictures per second") }
    }

    /// The bytes from the first up to picture `count` (every complete one, when nil) decode
    /// without FFmpeg errors.
    func checkDecodes(upTo count: Int? = nil, label: String) throws {
        // Only whole pictures: those the receiver completed (the last one may still be arriving).
        let last = accessUnits.last.map { $0.streamOffset + $0.byteCount } ?? 0
        let end = count.flatMap { $0 < accessUnits.count ? accessUnits[$0].streamOffset : nil } ?? last
        let expectedPictures = count ?? accessUnits.count
        let result = try FFmpeg.decode(Array(bytes[..<end]))
        #expect(result.errors.isEmpty, "\(label): \(result.errors)")
        #expect(result.frames >= expectedPictures, "\(label): \(result.frames) decoded of \(expectedPictures)")
    }
}

enum FFmpeg {
    /// Decodes Annex-B with FFmpeg: the number of pictures and the error output.
    static func decode(_ annexB: [UInt8]) throws -> (frames: Int, errors: String) {
        let result = try Subprocess.run("ffmpeg", ["-v", "error", "-f", "h264", "-i", "-",
                                                   "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"], stdin: annexB)
        return (result.stdout.count / ServeTests.frameBytes, result.stderr)
    }
}
