import ArgumentParser
import Foundation
import H264Streaming
import Logging
import NIOPosix

/// `h264 relay SOURCE --rtsp HOST:PORT[/PATH]`: one source (a camera's rtsp:// URL, an Annex-B
/// file at its frame rate, or with `--listen` a publisher) served to every viewer without
/// re-encoding (H264Streaming's `Relay`, `RelaySource`, `RTSPServer`, `AnnexBFanOutServer`), and
/// with `--rtmp URL` (repeatable) published to RTMP servers (`RTMPPublisher`s, sinks of the
/// relay's `Broadcaster`).
struct RelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Serve one H.264 or H.265 source to many viewers, without re-encoding.",
        discussion: """
        SOURCE: an rtsp[s]:// or rtmp[s]:// URL, or an Annex-B or MP4 file played at its rate (--loop repeats \
        it), or --listen for one publisher. Viewers: --rtsp HOST:PORT/PATH, raw Annex-B on --port; --rtmp \
        publishes; -o records MP4. Example: h264 relay rtsp://cam.local/stream --rtsp 0.0.0.0:8554/cam1
        """)

    @Argument(help: "An rtsp[s]:// or rtmp[s]:// URL, or an Annex-B or MP4 file (none with --listen).") var source: String?
    @OptionGroup var options: RelayOptions
    @OptionGroup(title: "RTSP authentication and TLS (viewers and the --listen publisher)") var auth: ServerAccessOptions
    @OptionGroup(title: "RTSP client (a camera SOURCE)") var client: RTSPClientOptions
    @OptionGroup(title: "RTMP publishing") var rtmp: RTMPOutputOptions
    @OptionGroup(title: "Audio") var audio: AudioOptions
    @OptionGroup(title: "Recording") var record: RecordOptions
    @OptionGroup(title: "HLS") var hls: HLSOptions

    func validate() throws {
        guard (source == nil) != (options.listen == nil) else { throw ValidationError("give SOURCE or --listen URL, one of them") }
        if options.loop && source.map({ RTSPURI.isAbsolute($0) || $0.lowercased().hasPrefix("rtmp") }) != false { throw ValidationError("--loop is for a file SOURCE") }
        guard options.rtsp != nil || !rtmp.rtmp.isEmpty || record.output != nil || hls.hls != nil else {
            throw ValidationError("give --rtsp, --rtmp, --hls or -o FILE.mp4 (or several)")
        }
    }

    func run() async throws { try await runReportingErrors(command: "relay") { try await relay() } }

    private func relay() async throws {
        signal(SIGPIPE, SIG_IGN)
        let logger = StandardErrorLogHandler.logger(command: "relay", quiet: options.quiet)
        let relay = Relay(keepingGOP: GOPKeeping(byteLimit: options.gopBytes, frameLimit: options.gopFrames), logger: logger)
        let address = try options.rtspAddress()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let eventLog = try EventLog(path: options.events)
        var closeSource: @Sendable () async -> Void = {}
        var outputs: (rtsp: RTSPServer?, tcp: AnnexBFanOutServer?, rtmp: [RTMPPublisher], hls: HLSOutput?) = (nil, nil, [], nil)
        var sinkTasks: [Task<LiveSinkOutcome, any Error>] = []
        var followers: [Task<Void, Never>?] = [eventLog.follow(relay.broadcaster.events)]
        func finish(sourceEnded: Bool) async {
            await outputs.tcp?.shutdown()
            await relay.broadcaster.closeAll(flushing: sourceEnded)
            for task in sinkTasks {
                do { _ = try await task.value } catch { log("an output failed: \(error)") }
            }
            for publisher in outputs.rtmp { await publisher.finish() }
            await outputs.rtsp?.shutdown()
            await outputs.hls?.server.shutdown()
            await closeSource()
            try? await group.shutdownGracefully()
            relay.broadcaster.finishEvents()
            for follower in followers { await follower?.value }
        }
        do {
            if let (host, port, _) = address {
                outputs.rtsp = try await listening("RTSP on \(host):\(port)") {
                    try await RTSPServer.start(host: host, port: port, group: group, configuration: auth.serverConfiguration(), logger: logger)
                }
                followers.append(eventLog.follow(outputs.rtsp?.events))
            }
            if let tcpPort = options.port {
                outputs.tcp = try await listening("\(options.host):\(tcpPort)") {
                    try await AnnexBFanOutServer.start(host: options.host, port: tcpPort, group: group, broadcaster: relay.broadcaster)
                }
            }
            let frames = try await open(group: group, eventLog: eventLog, logger: logger, closeSource: &closeSource)
            outputs.rtmp = try await rtmp.publishers(group: group, reconnect: client.reconnection, logger: logger)
            // Each publisher is a sink of the relay's broadcaster: it starts with the kept GOP and never slows the viewers.
            let mode = audio.rtmpMode, quiet = options.quiet, sourceAudio = frames.audioMedia?.format
            sinkTasks = outputs.rtmp.map { publisher in
                relay.broadcaster.attach(RTMPAudioOutput(publisher: publisher, mode: mode, sourceAudio: sourceAudio) { line in
                    if !quiet { FileHandle.standardError.write(Data("h264 relay: \(line)\n".utf8)) }
                })
            }
            let recorder = record.recorder { line in FileHandle.standardError.write(Data("h264 relay: \(line)\n".utf8)) }
            if let recorder { sinkTasks.append(relay.broadcaster.attach(recorder)) }
            outputs.hls = try await HLSOutput.start(hls, group: group, eventLog: eventLog, command: "relay")
            if let sink = outputs.hls?.sink { sinkTasks.append(relay.broadcaster.attach(sink)) }
            let tcpURL = outputs.tcp.map { "tcp://\(options.host):\($0.localAddress?.port ?? 0)" }
            let rtsp = outputs.rtsp
            // A file's frames are read where they are paced: no hop to the cooperative pool per frame.
            let work = Task(executorPreference: frames.executor) {
                var announced = false
                return try await relay.run(frames: frames) { format in
                    if let rtsp, let address { rtsp.mount(address.path, broadcaster: relay.broadcaster, format: format, audio: audio.noAudio ? nil : frames.audioMedia) }
                    guard !announced else { return }
                    announced = true
                    // Announced once the stream is mounted, so a viewer who reads it can play at once.
                    let rtspURL = address.flatMap { rtsp?.url(host: $0.host, path: $0.path) }
                    for url in [tcpURL, rtspURL].compactMap({ $0 }) { Self.announce(url, eventLog) }
                }
            }
            let outcome = try await StopSignal.catching(onStop: { work.cancel() }) { try await work.value }
            await finish(sourceEnded: outcome.sourceEnded)
            if outcome.frames == 0 && outcome.sourceEnded { throw CLIError("the source ended before its first decodable frame") }
            let stats = relay.broadcaster.statistics
            if !options.quiet {
                log("relayed \(outcome.frames) frames to \(stats.clients) viewers (\(stats.startsFromKeptGOP) started from the kept GOP; "
                    + "\(stats.overflows) skipped to an IDR); \(outcome.sourceEnded ? "the source ended" : "stopped by signal")")
                for publisher in outputs.rtmp { log(publisher.summary) }
                if let summary = recorder?.summary, !summary.files.isEmpty {
                    log(MP4Recording.summary(files: summary.files, videoFrames: summary.videoFrames, audioFrames: summary.audioFrames))
                }
            }
        } catch {
            await finish(sourceEnded: false)
            throw error
        }
    }

    /// `listening on URL` on standard error (always) and as a `listening` event.
    static func announce(_ url: String, _ eventLog: EventLog) {
        FileHandle.standardError.write(Data("h264 relay: listening on \(url)\n".utf8))
        eventLog.write(.listening(url: url))
    }

    /// Writes `h264 relay: LINE` on standard error.
    private func log(_ line: String) { FileHandle.standardError.write(Data("h264 relay: \(line)\n".utf8)) }
}
