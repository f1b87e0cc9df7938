import ArgumentParser
import Foundation
import H264
import H264Media
import H264Encoder
import H264Streaming
import Logging
import NIOCore
import NIOPosix

/// `h264 serve INPUT --port N`: encodes INPUT paced at its frame rate and streams Annex-B over
/// TCP to every connected client.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Encode video at its frame rate and stream it live as Annex-B H.264 over TCP.",
        discussion: """
        Every client that connects first gets SPS, PPS and an IDR made for it (clients joining together share one), \
        then the live pictures. A client that cannot keep up is skipped to the next IDR; the others never wait. \
        Watch with: ffplay -f h264 tcp://127.0.0.1:PORT (or ffmpeg -f h264 -i tcp://127.0.0.1:PORT …). \
        SIGINT or SIGTERM stops the server (exit status 0). \
        Started under nice (nice -n -10 h264 serve …), every thread of the server keeps that priority.
        """)

    @OptionGroup var source: InputOptions
    @Option(help: "TCP port to listen on (0: any free port; the address is printed on standard error).")
    var port: Int
    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"
    @Flag(help: "Start the input again when it ends, forever (not for standard input).")
    var loop = false
    @OptionGroup var encoding: EncodeOptions
    @Option(help: "Frames a client may have in flight before it is skipped to the next IDR (default: one second's worth).")
    var clientQueueFrames: Int?
    @Option(help: "Kernel send buffer per client in bytes (SO_SNDBUF; default: the system's). Smaller keeps slow clients closer to live.")
    var sendBufferSize: Int?
    @Flag(help: "Open every picture with an access unit delimiter.")
    var accessUnitDelimiters = false
    @Flag(help: "No log lines for clients and no summary.")
    var quiet = false
    @Option(help: "Also send the stream as plain RTP (RFC 6184, 1200-byte packets) to udp://HOST:PORT.")
    var rtp: String?
    @Option(help: "With --rtp: write the stream's SDP to this file (ffplay -protocol_whitelist file,udp,rtp FILE).")
    var sdp: String?
    @Option(help: "Also serve the stream over RTSP at rtsp://HOST:PORT/live (RTP over TCP or UDP; port 0: any free port, printed).")
    var rtsp: String?

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0…65535") }
        if sdp != nil && rtp == nil { throw ValidationError("--sdp describes the --rtp stream: give --rtp too") }
        if loop && source.isStandardInput { throw ValidationError("--loop needs a file: standard input cannot be read twice") }
        if let clientQueueFrames, clientQueueFrames < 1 { throw ValidationError("--client-queue-frames must be at least 1") }
        if let sendBufferSize, !(1024...(64 << 20)).contains(sendBufferSize) {
            throw ValidationError("--send-buffer-size must be 1024…67108864")
        }
    }

    func run() async throws {
        do {
            try await serve()
        } catch let error as ExitCode {
            throw error
        } catch {
            CLIIO.printError(command: "serve", String(describing: error))
            throw ExitCode.failure
        }
    }

    private func serve() async throws {
        signal(SIGPIPE, SIG_IGN)
        let priority = ProcessPriority()
        let (reader, _) = try source.open()
        let header = reader.header
        // Live by default: no lookahead and no B-frames, so a forced IDR is out within the frame.
        let configuration = try encoding.configuration(frameRate: header.frameRate, defaultPreset: .liveCapture)
        let log = logLine()
        let logger = StandardErrorLogHandler.logger(command: "serve", quiet: quiet)
        let doorbell = Doorbell()
        let broadcaster = Broadcaster(queueLimit: clientQueueFrames ?? max(8, Int(header.frameRate.rounded())), logger: logger,
                                      onKeyframeRequest: doorbell.ring)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let rtpSender: RTPSender?
        do {
            rtpSender = try await startRTP(group: group)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        let session = try encoderSession(header: header, configuration: configuration, broadcaster: broadcaster,
                                         rtpSender: rtpSender, log: log)
        defer { session.invalidate() }
        let format = try session.prepare()
        if let rtpSender, let sdp { try CLIIO.write(Array(rtpSender.sessionDescription(format: format).text.utf8), to: sdp) }

        // SIGINT/SIGTERM end the pacing loop; everything then closes in order (exit status 0).
        let stop = StopSignal(doorbell: doorbell)
        let stopCatchingSignals = stop.catchSignals()
        defer { stopCatchingSignals() }

        let server = try await listen(on: group, broadcaster: broadcaster)
        // Always printed: scripts and tests read the port from it.
        FileHandle.standardError.write(Data(("h264 serve: listening on tcp://\(host):\(server.localAddress?.port ?? port) "
            + "(\(header.width)x\(header.height) at \(EncodeCommand.format(header.frameRate)) fps)\n").utf8))
        let rtspServer = try await startRTSP(group: group, broadcaster: broadcaster, format: format, logger: logger)

        // The threads that exist now (event loop, encoder queue, executor), and once a second
        // those created since, run at the priority the server was started with.
        priority.adopt()
        let source = self.source
        var pacer = FramePacer(reader: reader, reopen: loop ? { try source.open().0 } : nil,
                               broadcaster: broadcaster, doorbell: doorbell, stop: stop)
        pacer.everySecond = priority.adopt
        let outcome = await pacer.run(encoder: session)

        // The input ended: each client is closed once its queue has been written (at most two
        // seconds). Stopped or failed: at once.
        session.invalidate()
        await server.shutdown()
        await rtspServer?.shutdown()
        await broadcaster.closeAll(flushing: outcome.ending == .inputEnded)
        await rtpSender?.shutdown()
        try? await group.shutdownGracefully()

        if let error = outcome.error { throw error }
        let stats = broadcaster.statistics
        log("served \(outcome.frames) frames to \(stats.clients) clients (at most \(stats.maxConcurrent) at once; "
            + "\(stats.overflows) skipped to an IDR); \(outcome.ending == .stopped ? "stopped by signal" : "input ended")")
    }

    /// Writes `h264 serve: LINE` on standard error, unless `--quiet`.
    private func logLine() -> @Sendable (String) -> Void {
        let quiet = self.quiet
        return { line in
            if !quiet { FileHandle.standardError.write(Data("h264 serve: \(line)\n".utf8)) }
        }
    }

    /// The encoder session whose every frame goes to the broadcaster as Annex-B bytes, made once.
    private func encoderSession(header: Y4MHeader, configuration: EncoderConfiguration, broadcaster: Broadcaster,
                                rtpSender: RTPSender?, log: @escaping @Sendable (String) -> Void) throws -> EncoderSession {
        let writer = Locked(AnnexBWriter(accessUnitDelimiters: accessUnitDelimiters))
        return try EncoderSession(width: header.width, height: header.height, configuration: configuration) { frame in
            let live = LiveFrame(avcc: frame.data, formatDescription: frame.formatDescription, isKeyframe: frame.isKeyframe,
                                 presentationTime: frame.presentationTimeStamp)
            do { try rtpSender?.send(live, presentationTime: frame.presentationTimeStamp) } catch { log("RTP: dropped a frame: \(error)") }
            var bytes: [UInt8] = []
            do {
                try writer.withLock { writer in try writer.write(frame, to: &bytes) }
            } catch {
                log("dropped a malformed encoded frame: \(error)")
                return
            }
            var withAnnexB = live
            withAnnexB.annexB = ByteBuffer(bytes: bytes)
            broadcaster.broadcast(withAnnexB)
        }
    }

    /// The listening socket; each accepted client joins the broadcaster.
    private func listen(on group: MultiThreadedEventLoopGroup, broadcaster: Broadcaster) async throws -> AnnexBFanOutServer {
        do {
            return try await AnnexBFanOutServer.start(host: host, port: port, group: group, broadcaster: broadcaster,
                                                      sendBufferSize: sendBufferSize)
        } catch {
            try? await group.shutdownGracefully()
            throw CLIError("cannot listen on \(host):\(port): \(error)")
        }
    }

    /// With `--rtp udp://HOST:PORT` (an IPv4 address or `localhost`): the RTP sender.
    private func startRTP(group: any EventLoopGroup) async throws -> RTPSender? {
        guard let url = rtp else { return nil }
        guard url.hasPrefix("udp://"), let colon = url.lastIndex(of: ":"), colon > url.index(url.startIndex, offsetBy: 6),
              let port = Int(url[url.index(after: colon)...]), (1...65_535).contains(port) else {
            throw CLIError("--rtp wants udp://HOST:PORT, not \(url)")
        }
        var host = String(url[url.index(url.startIndex, offsetBy: 6)..<colon])
        if host == "localhost" { host = "127.0.0.1" }
        guard (try? SocketAddress(ipAddress: host, port: port))?.protocol == .inet else {
            throw CLIError("--rtp: \(host) is not an IPv4 address")
        }
        do {
            return try await RTPSender.start(host: host, port: port, group: group, maximumTransmissionUnit: 1200)
        } catch {
            throw CLIError("--rtp: cannot open a UDP socket (\(error))")
        }
    }

    /// With `--rtsp HOST:PORT` (port 0 takes a free one, `[::1]:PORT` for IPv6): the RTSP
    /// server playing the stream at `/live`, its URL printed on standard error (always: scripts
    /// and tests read the port from it).
    private func startRTSP(group: any EventLoopGroup, broadcaster: Broadcaster, format: FormatDescription,
                           logger: Logger) async throws -> RTSPServer? {
        guard let address = rtsp else { return nil }
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
              (0...65_535).contains(port) else {
            throw CLIError("--rtsp wants HOST:PORT, not \(address)")
        }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        var configuration = RTSPServer.Configuration()
        configuration.sendBufferSize = sendBufferSize
        let server: RTSPServer
        do {
            server = try await RTSPServer.start(host: host, port: port, group: group, configuration: configuration, logger: logger)
        } catch {
            throw CLIError("cannot listen for RTSP on \(address): \(error)")
        }
        server.mount("/live", broadcaster: broadcaster, format: format)
        FileHandle.standardError.write(Data("h264 serve: listening on \(server.url(host: host, path: "/live"))\n".utf8))
        return server
    }
}
