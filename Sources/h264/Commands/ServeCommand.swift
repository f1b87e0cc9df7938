import ArgumentParser
import Foundation
import H264
import H264Encoder
import MediaContainers
import H264Streaming
import Logging
import NIOCore
import NIOPosix

/// `h264 serve INPUT --rtsp HOST:PORT` (or `--rtmp`, `--rtp`, `--port N`): encodes INPUT paced
/// at its frame rate (H264Streaming's `FramePacer`) and streams it to every viewer: over RTSP,
/// RTMP, RTP, and with `--port` as Annex-B over TCP.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Encode video at its frame rate; serve it over RTSP, RTMP, RTP or TCP.",
        discussion: """
        Outputs (at least one): --rtsp HOST:PORT (rtsp://HOST:PORT/live), --rtmp URL, --rtp udp://HOST:PORT, \
        --port N (ffplay -f h264 tcp://HOST:N). Each viewer starts at an IDR made for it; one that cannot keep up \
        skips to the next IDR. SIGINT or SIGTERM stops the server (exit status 0).
        """)

    @OptionGroup var source: InputOptions
    @OptionGroup var network: ServeOutputOptions
    @OptionGroup(title: "RTSP authentication and TLS") var auth: ServerAccessOptions
    @OptionGroup(title: "RTMP publishing") var rtmp: RTMPOutputOptions
    @OptionGroup(title: "Audio") var audio: AudioOptions
    @OptionGroup(title: "Recording") var record: RecordOptions
    @OptionGroup(title: "HLS") var hls: HLSOptions
    @Flag(help: "Start the input again when it ends, forever (not for standard input).") var loop = false
    @OptionGroup var encoding: EncodeOptions
    @Flag(help: "No log lines for clients and no summary.") var quiet = false

    func validate() throws {
        if loop && source.isStandardInput { throw ValidationError("--loop needs a file: standard input cannot be read twice") }
        if !auth.users.isEmpty && network.rtsp == nil { throw ValidationError("--auth protects the RTSP server: give --rtsp too") }
        if network.port == nil && network.rtsp == nil && network.rtp == nil && rtmp.rtmp.isEmpty && record.output == nil && hls.hls == nil {
            throw ValidationError("pick an output: --rtsp HOST:PORT, --rtmp URL, --rtp udp://HOST:PORT, --hls HOST:PORT, --port N (raw Annex-B over TCP) or -o FILE.mp4")
        }
    }

    func run() async throws { try await runReportingErrors(command: "serve") { try await serve() } }

    private func serve() async throws {
        encoding.warnAboutOldSpellings(command: "serve")
        signal(SIGPIPE, SIG_IGN)
        let priority = ProcessPriority()
        var (reader, _) = try source.open()
        let header = reader.header
        // Live by default: no lookahead and no B-frames, so a forced IDR is out within the frame.
        let configuration = try encoding.configuration(frameRate: header.frameRate, defaultPreset: .liveCapture)
        let logger = StandardErrorLogHandler.logger(command: "serve", quiet: quiet)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The pacer's deadlines are scheduled tasks of the server's event loop.
        let doorbell = Doorbell(eventLoop: group.next())
        let broadcaster = Broadcaster(queueLimit: network.clientQueueFrames ?? max(8, Int(header.frameRate.rounded())), logger: logger,
                                      onKeyframeRequest: doorbell.ring)
        let rtpSender: RTPSender?, publishers: [RTMPPublisher]
        do { (rtpSender, publishers) = (try await network.startRTP(group: group), try await rtmp.publishers(group: group, reconnect: network.reconnect ? .init() : nil, logger: logger)) } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        let session = try encoderSession(header: header, configuration: configuration, broadcaster: broadcaster)
        defer { session.invalidate() }
        let format = try session.prepare()
        if let rtpSender, let sdp = network.sdp { try CLIIO.write(Array(rtpSender.sessionDescription(format: format).text.utf8), to: sdp) }

        // SIGINT/SIGTERM end the pacing loop; everything then closes in order (exit status 0).
        let stop = StopSignal(doorbell: doorbell)
        let stopCatchingSignals = stop.catchSignals()
        defer { stopCatchingSignals() }

        // The raw Annex-B TCP fan-out, with --port only.
        var tcpServer: AnnexBFanOutServer?
        if let port = network.port {
            do {
                tcpServer = try await AnnexBFanOutServer.start(host: network.host, port: port, group: group, broadcaster: broadcaster,
                                                               sendBufferSize: network.sendBufferSize)
            } catch {
                try? await group.shutdownGracefully()
                throw CLIError("cannot listen on \(network.host):\(port): \(error)")
            }
        }
        let eventLog = try EventLog(path: network.events)
        let stream = "\(header.width)x\(header.height) at \(ProgressLine.format(header.frameRate)) fps"
        if let tcpServer, let port = network.port {
            let url = "tcp://\(network.host):\(tcpServer.localAddress?.port ?? port)"
            FileHandle.standardError.write(Data("h264 serve: listening on \(url) (\(stream))\n".utf8))
            eventLog.write(.listening(url: url))
        } else {
            FileHandle.standardError.write(Data("h264 serve: serving \(stream)\n".utf8))
        }
        let rtspServer = try await network.startRTSP(group: group, broadcaster: broadcaster, format: format, auth: auth, logger: logger, eventLog: eventLog)
        let followers = [eventLog.follow(broadcaster.events), eventLog.follow(rtspServer?.events)]
        // The RTP sender and every RTMP publisher: sinks of the broadcaster, each at its own pace.
        // A y4m source has no audio: --silent-audio gives the RTMP outputs a silent AAC track.
        let recorder = record.recorder { [quiet] line in Self.log(line, quiet: quiet) }
        let hlsOutput = try await HLSOutput.start(hls, group: group, eventLog: eventLog, command: "serve")
        let sinks: [any LiveSink] = publishers.map { RTMPAudioOutput(publisher: $0, mode: audio.rtmpMode) { _ in } } + (rtpSender.map { [$0] } ?? [])
            + (recorder.map { [$0] } ?? []) + (hlsOutput.map { [$0.sink] } ?? [])
        let sinkTasks = sinks.map { broadcaster.attach($0) }

        // The threads that exist now (event loop, encoder queue, executor), and once a second
        // those created since, run at the priority the server was started with.
        priority.adopt()
        var pacer = FramePacer(frameInterval: .seconds(1) * header.frameRateDenominator / header.frameRateNumerator, broadcaster: broadcaster, doorbell: doorbell)
        pacer.everySecond = priority.adopt
        let source = self.source
        var played = 0
        let outcome = await pacer.run(encoder: session, nextFrame: {
            // The next frame, from the start again at the end with --loop; nil at the end.
            while true {
                if let bytes = try CLIError.reading({ try reader.nextFrame() }) {
                    played += 1
                    return try VideoFrame(pixelFormat: .i420, width: header.width, height: header.height, contiguous: bytes)
                }
                guard loop, reader.framesRead > 0 else {
                    if played == 0 { throw CLIError("the input has no frames") }
                    return nil
                }
                reader = try source.open().0
                guard reader.header.width == header.width, reader.header.height == header.height else {
                    throw CLIError("the input changed size between loops")
                }
            }
        }, isStopped: { stop.isSet })

        // The input ended: each client is closed once its queue has been written (at most two
        // seconds). Stopped or failed: at once.
        session.invalidate()
        await tcpServer?.shutdown()
        await rtspServer?.shutdown()
        await broadcaster.closeAll(flushing: outcome.ending == .inputEnded)
        for task in sinkTasks {
            do { _ = try await task.value } catch { log("an output failed: \(error)") }
        }
        await rtpSender?.shutdown()
        await hlsOutput?.server.shutdown()
        for publisher in publishers { await publisher.finish() }
        try? await group.shutdownGracefully()
        broadcaster.finishEvents()
        for follower in followers { await follower?.value }

        if let error = outcome.error { throw outcome.ending == .inputEnded ? CLIError("encoding the last frames: \(error)") : error }
        let stats = broadcaster.statistics
        log("served \(outcome.frames) frames to \(stats.clients) clients (at most \(stats.maxConcurrent) at once; "
            + "\(stats.overflows) skipped to an IDR); \(outcome.ending == .stopped ? "stopped by signal" : "input ended")")
        for publisher in publishers { log(publisher.summary) }
        if let summary = recorder?.summary, !summary.files.isEmpty {
            log(MP4Recording.summary(files: summary.files, videoFrames: summary.videoFrames, audioFrames: summary.audioFrames))
        }
    }

    /// Writes `h264 serve: LINE` on standard error, unless `--quiet`.
    private func log(_ line: String) { Self.log(line, quiet: quiet) }
    private static func log(_ line: String, quiet: Bool) { if !quiet { FileHandle.standardError.write(Data("h264 serve: \(line)\n".utf8)) } }

    /// The encoder session whose every frame goes to the broadcaster, which makes each output's
    /// form of it once (RTP packets, Annex-B for raw viewers) and hands it to the sinks. With
    /// `--aud` and `--port` the Annex-B bytes are made here, with their delimiters.
    private func encoderSession(header: Y4MHeader, configuration: EncoderConfiguration, broadcaster: Broadcaster) throws -> EncoderSession {
        let writer = network.accessUnitDelimiters && network.port != nil ? Locked(AnnexBWriter(accessUnitDelimiters: true)) : nil
        let log = { @Sendable [quiet] (line: String) in Self.log(line, quiet: quiet) }
        return try EncoderSession(width: header.width, height: header.height, configuration: configuration) { frame in
            var live = LiveFrame(frame.compressedFrame)
            if let writer {
                var bytes: [UInt8] = []
                do {
                    try writer.withLock { writer in try writer.write(frame, to: &bytes) }
                } catch {
                    log("dropped a malformed encoded frame: \(error)")
                    return
                }
                live?.annexB = ByteBuffer(bytes: bytes)
            }
            if let live { broadcaster.broadcast(live) }
        }
    }
}
