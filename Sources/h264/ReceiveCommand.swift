import ArgumentParser
import Foundation
import H264
import H264Streaming
import Synchronization

/// Set by SIGINT/SIGTERM while `h264 receive` runs.
let receiveStopRequested = Atomic<Bool>(false)

/// `h264 receive STREAM.sdp -o OUT.h264` or `h264 receive rtsp://HOST:PORT/PATH -o OUT.h264`:
/// receives H.264 over plain RTP (RFC 6184) described by an SDP file, or from an RTSP server
/// (RTP/AVP/TCP interleaved, or RTP/AVP over UDP), and writes the access units as an Annex-B byte stream.
/// With `--listen rtsp://HOST:PORT/PATH` it is the RTSP server a publisher pushes to instead
/// (RFC 2326 record mode; `RTSPRecordServer`).
struct ReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive H.264 over RTSP (rtsp:// URL) or plain RTP (SDP file) and write Annex-B.",
        discussion: """
        With an SDP file: listens on the SDP's UDP port (IPv4, unicast). With an rtsp:// URL: sends OPTIONS, \
        DESCRIBE, SETUP (RTP/AVP/TCP, interleaved=0-1; or RTP/AVP over UDP with --transport udp) and PLAY, reads \
        the RTP packets (interleaved in the RTSP connection, or from the UDP port pair it opened) and sends TEARDOWN at the end (a status other than 200 is an error naming it). \
        With --listen and an rtsp:// URL (port 0: a free one; the URL is printed): the RTSP server one publisher \
        pushes to (RFC 2326 record mode, as ffmpeg -f rtsp speaks it: ANNOUNCE with the SDP, SETUP with \
        mode=record over TCP interleaved or UDP, RECORD); a second publisher gets 453; waiting for a publisher has \
        no time limit (--idle-timeout counts from its RECORD); the recording ends at the publisher's TEARDOWN or \
        when it disconnects. In every mode: \
        puts packets back in order, drops access units hit by loss (reported on standard error) and writes every \
        access unit from the first IDR on, with SPS and PPS (from the stream or the SDP's sprop-parameter-sets) \
        before each IDR. Stops after --frames access units, after --idle-timeout seconds without a packet, or on \
        SIGINT/SIGTERM (exit status 0). \
        Decoded output: with -o FILE.y4m (or --decode, e.g. -o - --decode | ffplay -) the access units are decoded \
        as they arrive (libavcodec, as h264 decode) and written as y4m, --frames counting decoded frames; \
        --decoded FILE.y4m writes that beside the Annex-B of -o. The y4m frame rate is the SPS's VUI timing, else \
        the spacing of the RTP timestamps, else 30; a size change is an error (y4m has one size); stopping flushes \
        the decoder. \
        Examples: h264 serve in.y4m --port 0 --rtsp 127.0.0.1:8554, then h264 receive rtsp://127.0.0.1:8554/live \
        -o out.h264; h264 serve in.y4m --port 0 --rtp udp://127.0.0.1:5004 --sdp s.sdp, then h264 receive s.sdp -o out.h264; \
        h264 receive --listen rtsp://127.0.0.1:8554/live -o out.h264, then ffmpeg -re -i in.264 -c copy -f rtsp \
        rtsp://127.0.0.1:8554/live.
        """)

    @Argument(help: "An rtsp:// URL, or the SDP file describing a plain RTP stream (as written by h264 serve --sdp or ffmpeg -sdp_file).")
    var sdp: String
    @Option(name: .shortAndLong, help: "The Annex-B output file ('-' for standard output); decoded y4m when it ends in .y4m or with --decode.")
    var output: String
    @Option(help: "Stop after writing this many access units (decoded frames when decoding).")
    var frames: Int?
    @Option(help: "Stop when no packet has arrived for this many seconds.")
    var idleTimeout: Double = 10
    @Option(help: "How many later packets may wait for a missing one before it counts as lost.")
    var reorderWindow: Int = 16
    @Option(help: "With an rtsp:// URL: the RTP transport to ask for, tcp (interleaved in the RTSP connection) or udp.")
    var transport: Transport = .tcp

    /// The lower transport `--transport` asks an RTSP server for.
    enum Transport: String, ExpressibleByArgument, CaseIterable { case tcp, udp }
    @Flag(help: "Listen on the rtsp:// URL (port 0: a free one) for one publisher that sends RTSP ANNOUNCE and RECORD (ffmpeg -f rtsp, GStreamer rtspclientsink), instead of connecting to a server.")
    var listen = false
    @Flag(help: "No log lines for losses and damaged packets, and no summary.")
    var quiet = false
    @Flag(help: "Decode and write y4m to -o (implied when -o ends in .y4m).")
    var decode = false
    @Option(help: "Also decode into this y4m file ('-' for standard output); -o stays Annex-B.")
    var decoded: String?

    /// True when -o gets the decoded y4m instead of Annex-B.
    private var decodesOutput: Bool { decode || output.lowercased().hasSuffix(".y4m") }

    func validate() throws {
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be positive") }
        guard (0...1024).contains(reorderWindow) else { throw ValidationError("--reorder-window must be 0…1024") }
        if decoded != nil && decodesOutput {
            throw ValidationError("--decoded writes y4m beside the Annex-B of -o; -o \(output)\(decode ? " --decode" : "") is y4m already")
        }
        if let decoded, decoded == output { throw ValidationError("--decoded and -o name the same file") }
    }

    /// The output: Annex-B to -o, decoded y4m to -o (`decodesOutput`) or --decoded, or both.
    func receivedOutput(format: FormatDescription?) throws -> ReceivedAnnexBOutput {
        let y4m = decodesOutput ? output : decoded
        return try ReceivedAnnexBOutput(path: decodesOutput ? nil : output, format: format, frames: frames,
                                        decoded: try y4m.map { try ReceivedY4MOutput(path: $0, frames: frames) }, log: log)
    }

    func run() async throws {
        do {
            if listen { return try await receiveListening() }
            if !sdp.lowercased().hasPrefix("rtsp://") { return try await receiveRTP() }
            try receive()
        } catch let error as ExitCode {
            throw error
        } catch {
            CLIIO.printError(command: "receive", String(describing: error))
            throw ExitCode.failure
        }
    }

    func log(_ line: String) {
        if !quiet { FileHandle.standardError.write(Data("h264 receive: \(line)\n".utf8)) }
    }

    private func receive() throws {
        if sdp.lowercased().hasPrefix("rtsp://") { return try receiveRTSP() }
    }

    /// The depacketizer for the stream `description` describes, and the format of its
    /// sprop-parameter-sets (nil without them).
    func depacketizer(for description: SessionDescription) throws -> (RTPDepacketizer, FormatDescription?) {
        (try description.depacketizer(reorderWindow: reorderWindow), try? description.formatDescription())
    }

    /// A UDP socket (IPv4) bound to `port` on every address, with a 4 MiB receive buffer.
    private static func udpSocket(port: Int) throws -> Int32 {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw CLIError("cannot open a UDP socket (errno \(errno))") }
        var bufferSize: Int32 = 4 << 20
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = INADDR_ANY
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(socketDescriptor)
            throw CLIError("cannot listen on UDP port \(port) (errno \(errno))")
        }
        return socketDescriptor
    }

    /// An RTP and RTCP socket pair on ports P and P+1, P even (RFC 3550 clause 11), P chosen
    /// by the system.
    private static func udpSocketPair() throws -> (rtp: Int32, rtcp: Int32, port: Int) {
        for _ in 0..<20 {
            let probe = try udpSocket(port: 0)
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) }
            }
            let port = Int(UInt16(bigEndian: address.sin_port))
            guard port % 2 == 0, port < 65_535, let rtcp = try? udpSocket(port: port + 1) else {
                close(probe)
                continue
            }
            return (probe, rtcp, port)
        }
        throw CLIError("cannot find a free even UDP port pair")
    }

    func installStopHandlers() {
        receiveStopRequested.store(false, ordering: .relaxed)
        signal(SIGINT) { _ in receiveStopRequested.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in receiveStopRequested.store(true, ordering: .relaxed) }
    }

    /// `h264 receive rtsp://…`: OPTIONS, DESCRIBE, SETUP (RTP/AVP/TCP, interleaved=0-1, or
    /// RTP/AVP over UDP with `--transport udp`), PLAY, RTP until done, TEARDOWN.
    private func receiveRTSP() throws {
        let client = try RTSPClient(url: sdp)
        _ = try client.request("OPTIONS", uri: sdp)
        let described = try client.request("DESCRIBE", uri: sdp, headers: [("Accept", "application/sdp")])
        let description: SessionDescription
        do {
            description = try SessionDescription(parsing: String(decoding: described.body, as: UTF8.self))
        } catch {
            throw CLIError("DESCRIBE \(sdp): the SDP: \(error)")
        }
        var (depacketizer, format) = try depacketizer(for: description)
        let base = described.header("Content-Base") ?? described.header("Content-Location") ?? sdp
        let track = RTSPURI.resolve(description.control, against: base)
        let udp = transport == .udp ? try Self.udpSocketPair() : nil
        defer { if let udp { close(udp.rtp); close(udp.rtcp) } }
        let offer = udp.map { "RTP/AVP;unicast;client_port=\($0.port)-\($0.port + 1)" } ?? "RTP/AVP/TCP;unicast;interleaved=0-1"
        let setup = try client.request("SETUP", uri: track, headers: [("Transport", offer)])
        guard let session = setup.header("Session").map({ String($0.prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces) }) else {
            throw CLIError("SETUP \(track): no Session in the answer")
        }
        let channel = (try? RTSPTransport.parseList(setup.header("Transport") ?? "").first?.interleavedChannels?.lowerBound)
            .flatMap { $0 }.map(UInt8.init(truncatingIfNeeded:)) ?? 0
        let sink = try receivedOutput(format: format)
        installStopHandlers()
        let aggregate = RTSPURI.resolve("*", against: base)
        _ = try client.request("PLAY", uri: aggregate, headers: [("Session", session), ("Range", "npt=0.000-")])
        log("playing \(sdp) (session \(session), RTP " + (udp.map { "on udp port \($0.port)" } ?? "on interleaved channel \(channel)") + ")")

        var lastPacket = ContinuousClock.now, lastKeepAlive = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 65_536)
        func handle(_ messages: [RTSPMessageReader.Message]) {
            if let udp {
                var descriptor = pollfd(fd: udp.rtp, events: Int16(POLLIN), revents: 0)
                while poll(&descriptor, 1, 0) > 0 {
                    let count = buffer.withUnsafeMutableBytes { recv(udp.rtp, $0.baseAddress, $0.count, 0) }
                    guard count > 0 else { break }
                    lastPacket = .now
                    buffer.withUnsafeBytes { depacketizer.append(packet: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                }
                return
            }
            for case .interleavedFrame(channel, let payload) in messages {
                lastPacket = .now
                payload.withUnsafeBytes { depacketizer.append(packet: $0) }
            }
        }
        handle(client.pending())
        try sink.drain(&depacketizer)
        while !sink.done && !receiveStopRequested.load(ordering: .relaxed) {
            if let udp {
                var descriptor = pollfd(fd: udp.rtp, events: Int16(POLLIN), revents: 0)
                _ = poll(&descriptor, 1, 200)
            }
            guard let messages = try client.read(timeout: udp == nil ? .milliseconds(200) : .zero) else {
                log("the server closed the connection")
                break
            }
            handle(messages)
            try sink.drain(&depacketizer)
            if ContinuousClock.now - lastPacket > .seconds(idleTimeout) {
                log("no packet for \(idleTimeout) s")
                break
            }
            // The server's session times out without a request (RFC 2326 clause 12.37; 60 s by default).
            if ContinuousClock.now - lastKeepAlive > .seconds(20) {
                lastKeepAlive = .now
                try? client.send("GET_PARAMETER", uri: aggregate, headers: [("Session", session)])
            }
        }
        let finished = Result { try sink.finish(&depacketizer) }
        if !client.isClosed {
            do {
                _ = try client.request("TEARDOWN", uri: aggregate, headers: [("Session", session)], timeout: .seconds(2))
            } catch {
                log("TEARDOWN: \(error)")
            }
        }
        try finished.get()
    }
}
