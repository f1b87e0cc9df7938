import ArgumentParser
import Dispatch
import Foundation
import H264
import H264Encoder
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization // Atomic (sanitizers see atomics; locks are NIOLockedValueBox, pthread-based)

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
    @Option(help: "Also serve the stream over RTSP at rtsp://HOST:PORT/live (RTP over TCP; port 0: any free port, printed).")
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
        var (reader, _) = try source.open()
        let header = reader.header
        // Live by default: no lookahead and no B-frames, so a forced IDR is out within the frame.
        let configuration = try encoding.configuration(frameRate: header.frameRate, defaultPreset: .liveCapture)
        let frameDuration = Duration.seconds(1) * header.frameRateDenominator / header.frameRateNumerator
        let quiet = self.quiet
        let log: @Sendable (String) -> Void = { line in
            if !quiet { FileHandle.standardError.write(Data("h264 serve: \(line)\n".utf8)) }
        }
        let queueLimit = clientQueueFrames ?? max(8, Int(header.frameRate.rounded()))
        let broadcaster = Broadcaster(queueLimit: queueLimit, log: log)

        let writer = NIOLockedValueBox(AnnexBWriter(accessUnitDelimiters: accessUnitDelimiters))
        let rtpSender = try rtp.map { try RTPSender(url: $0, maximumTransmissionUnit: 1200) }
        let session = try EncoderSession(width: header.width, height: header.height, configuration: configuration) { frame in
            do { try rtpSender?.send(frame) } catch { log("RTP: dropped a frame: \(error)") }
            var bytes: [UInt8] = []
            do {
                try writer.withLockedValue { w in try w.write(frame, to: &bytes) }
            } catch {
                log("dropped a malformed encoded frame: \(error)")
                return
            }
            broadcaster.broadcast(ByteBuffer(bytes: bytes), isKeyframe: frame.isKeyframe)
        }
        defer { session.invalidate() }
        let format = try session.prepare()
        if let rtpSender, let sdp { try rtpSender.writeSessionDescription(format: format, to: sdp) }

        // SIGINT/SIGTERM end the pacing loop; everything then closes in order (exit status 0).
        let stop = StopFlag()
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let signalSources = [SIGINT, SIGTERM].map { number in
            let signalSource = DispatchSource.makeSignalSource(signal: number, queue: .global())
            signalSource.setEventHandler { stop.set() }
            signalSource.resume()
            return signalSource
        }
        defer { for signalSource in signalSources { signalSource.cancel() } }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server: any Channel
        do {
            var bootstrap = ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            if let sendBufferSize {
                bootstrap = bootstrap.childChannelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(sendBufferSize))
            }
            server = try await bootstrap
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ClientHandler(broadcaster: broadcaster))
                    }
                }
                .bind(host: host, port: port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw Y4MError("cannot listen on \(host):\(port): \(error)")
        }
        let boundPort = server.localAddress?.port ?? port
        // Always printed: scripts and tests read the port from it.
        FileHandle.standardError.write(Data(
            "h264 serve: listening on tcp://\(host):\(boundPort) (\(header.width)x\(header.height) at \(EncodeCommand.format(header.frameRate)) fps)\n".utf8))
        let rtspServer = try await RTSPServer.start(ifRequested: rtsp, group: group, broadcaster: broadcaster, format: format,
                                                    sendBufferSize: sendBufferSize, log: log)

        // Pacing: frame i is due at start + i × frame duration (absolute deadlines, so the rate
        // does not drift). A viewer waiting for an IDR pulls the due frame forward — but never
        // more than one frame interval ahead of its deadline, so the schedule still holds and
        // a new viewer has its IDR within milliseconds rather than up to a frame later. A
        // server that fell behind by over a second starts counting again instead of bursting.
        let clock = ContinuousClock()
        var deadline = clock.now
        var index = 0
        // The threads that exist now (event loop, encoder queue, executor), and once a second
        // those created since, run at the priority the server was started with.
        priority.adopt()
        let framesPerSecond = max(1, Int(header.frameRate.rounded()))
        var failure: (any Error)?
        var endedByInput = false
        while !stop.isSet {
            let frame: VideoFrame
            do {
                guard let bytes = try reader.nextFrame() else {
                    if loop && reader.framesRead > 0 {
                        (reader, _) = try source.open()
                        guard reader.header.width == header.width, reader.header.height == header.height else {
                            throw Y4MError("the input changed size between loops")
                        }
                        continue
                    }
                    if index == 0 { throw Y4MError("the input has no frames") }
                    endedByInput = true
                    break
                }
                frame = try VideoFrame(pixelFormat: .i420, width: header.width, height: header.height, contiguous: bytes)
            } catch {
                failure = error
                break
            }
            while !stop.isSet {
                let now = clock.now
                if now >= deadline { break }
                if broadcaster.keyframeWanted && now >= deadline - frameDuration { break }
                // Short naps: a joining viewer is noticed within 2 ms.
                try? await clock.sleep(until: min(deadline, now + .milliseconds(2)), tolerance: .microseconds(500))
            }
            if stop.isSet { break }
            do {
                try session.encode(frame, presentationTimeStamp: frameDuration * index, duration: frameDuration,
                                   forceKeyframe: broadcaster.takeKeyframeRequest())
            } catch {
                failure = error
                break
            }
            index += 1
            if index % framesPerSecond == 0 { priority.adopt() }
            deadline += frameDuration
            let now = clock.now
            if deadline < now - .seconds(1) { deadline = now }
        }

        if endedByInput {
            // The input ended: deliver the last frames, then close each client once its queue
            // has been written (at most two seconds).
            try? session.completeFrames()
        }
        session.invalidate()
        try? await server.close()
        await rtspServer?.close()
        await broadcaster.closeAll(flushing: endedByInput, on: group.next())
        try? await group.shutdownGracefully()

        if let failure { throw failure }
        let stats = broadcaster.statistics
        log("served \(index) frames to \(stats.clients) clients (at most \(stats.maxConcurrent) at once; "
            + "\(stats.overflows) skipped to an IDR); \(stop.isSet ? "stopped by signal" : "input ended")")
    }
}

/// Set from a signal handler, read by the pacing loop.
private final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .releasing) }
    var isSet: Bool { flag.load(ordering: .acquiring) }
}

/// The clients of a live stream and what each has been sent.
///
/// Every encoded frame is turned into bytes once and the same `ByteBuffer` is written to every
/// client that is streaming. A new client waits for an IDR and asks for one (forced on the next
/// frame, shared by every client waiting then). A client with `queueLimit` frames written but
/// not yet taken by the kernel is skipped: it gets nothing until its queue has drained to a
/// quarter and an IDR comes (it asks for one then). A client that left is removed when its
/// channel closes; writes to it fail quietly.
final class Broadcaster: Sendable {
    private struct Client {
        let channel: any Channel
        let address: String
        var streaming = false
        /// Waiting for an IDR it asked for.
        var askedForKeyframe = true
        var queuedFrames = 0
        var framesSent = 0
    }

    private struct State {
        var clients: [Int: Client] = [:]
        var nextId = 1
        var totalClients = 0
        var maxConcurrent = 0
        var overflows = 0
    }

    /// Statistics for the summary line.
    struct Statistics { var clients: Int; var maxConcurrent: Int; var overflows: Int }

    private let state = NIOLockedValueBox(State())
    private let keyframeRequested = Atomic<Bool>(false)
    private let queueLimit: Int
    private let log: @Sendable (String) -> Void

    init(queueLimit: Int, log: @escaping @Sendable (String) -> Void) {
        self.queueLimit = queueLimit
        self.log = log
    }

    var statistics: Statistics {
        state.withLockedValue { Statistics(clients: $0.totalClients, maxConcurrent: $0.maxConcurrent, overflows: $0.overflows) }
    }

    /// True when a client is waiting for an IDR it asked for.
    var keyframeWanted: Bool { keyframeRequested.load(ordering: .acquiring) }

    /// True when the next frame should be an IDR (a client is waiting for one); clears the request.
    func takeKeyframeRequest() -> Bool {
        keyframeRequested.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// Registers a connected client; it waits for the next IDR, which it asks for.
    func add(_ channel: any Channel) -> Int {
        let address = channel.remoteAddress.map { "\($0)" } ?? "?"
        let id = state.withLockedValue { s in
            let id = s.nextId
            s.nextId += 1
            s.clients[id] = Client(channel: channel, address: address)
            s.totalClients += 1
            s.maxConcurrent = max(s.maxConcurrent, s.clients.count)
            keyframeRequested.store(true, ordering: .releasing)
            return id
        }
        log("client \(id) joined from \(address)")
        return id
    }

    /// Forgets a client whose channel closed.
    func remove(_ id: Int) {
        guard let client = state.withLockedValue({ $0.clients.removeValue(forKey: id) }) else { return }
        log("client \(id) left after \(client.framesSent) frames")
    }

    /// Sends one encoded frame (Annex-B bytes) to every client that can take it.
    func broadcast(_ bytes: ByteBuffer, isKeyframe: Bool) {
        var targets: [(id: Int, channel: any Channel)] = []
        var overflowed: [Int] = []
        state.withLockedValue { s in
            var stillWaiting = false
            for (id, var client) in s.clients {
                if client.streaming && client.queuedFrames >= queueLimit {
                    client.streaming = false
                    client.askedForKeyframe = false
                    s.overflows += 1
                    overflowed.append(id)
                }
                if !client.streaming {
                    let drained = client.queuedFrames <= queueLimit / 4
                    if isKeyframe && drained {
                        client.streaming = true
                        client.askedForKeyframe = false
                    } else if isKeyframe {
                        client.askedForKeyframe = false // missed this one: ask again once drained
                    } else if drained && !client.askedForKeyframe {
                        client.askedForKeyframe = true
                        keyframeRequested.store(true, ordering: .releasing)
                    }
                    if !client.streaming && client.askedForKeyframe { stillWaiting = true }
                }
                if client.streaming {
                    client.queuedFrames += 1
                    client.framesSent += 1
                    targets.append((id, client.channel))
                }
                s.clients[id] = client
            }
            // An IDR that served every waiting client settles earlier requests.
            if isKeyframe && !stillWaiting { keyframeRequested.store(false, ordering: .releasing) }
        }
        for id in overflowed { log("client \(id) fell \(queueLimit) frames behind: skipped to the next IDR") }
        for target in targets {
            let channel = target.channel, id = target.id
            channel.writeAndFlush(bytes).whenComplete { result in
                self.state.withLockedValue { s in s.clients[id]?.queuedFrames -= 1 }
                if case .failure = result { channel.close(promise: nil) }
            }
        }
    }

    /// Closes every client: at once, or after its queued frames were written (`flushing`,
    /// at most two seconds).
    func closeAll(flushing: Bool, on loop: any EventLoop) async {
        let channels = state.withLockedValue { $0.clients.values.map(\.channel) }
        guard !channels.isEmpty else { return }
        let closed: [EventLoopFuture<Void>] = channels.map { channel in
            let promise = channel.eventLoop.makePromise(of: Void.self)
            channel.closeFuture.cascade(to: promise)
            if flushing {
                channel.writeAndFlush(ByteBuffer()).whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
            return promise.futureResult
        }
        if flushing {
            let force = loop.scheduleTask(in: .seconds(2)) { for channel in channels { channel.close(promise: nil) } }
            try? await EventLoopFuture.andAllComplete(closed, on: loop).get()
            force.cancel()
        } else {
            try? await EventLoopFuture.andAllComplete(closed, on: loop).get()
        }
    }
}

/// One client connection: registers with the broadcaster, ignores what the client sends.
private final class ClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let broadcaster: Broadcaster
    private var id: Int?

    init(broadcaster: Broadcaster) { self.broadcaster = broadcaster }

    func channelActive(context: ChannelHandlerContext) {
        id = broadcaster.add(context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let id { broadcaster.remove(id) }
        id = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Viewers have nothing to say; what they send is dropped.
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or broken connection: the client is gone.
        context.close(promise: nil)
    }
}
