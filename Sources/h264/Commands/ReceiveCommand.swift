import ArgumentParser
import Foundation
import H264
import H264Streaming
import HEVC
import NIOPosix
import RTP

/// `h264 receive STREAM.sdp|rtsp://…|rtmp://… -o OUT.h264` (`RTPReceiver`, `RTSPClient`, `RTMPPlayer`), or with
/// `--listen` the RTSP server a publisher pushes to (`RTSPRecordServer`): the discussion says the rest.
struct ReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive H.264 over RTSP (H.265 too), RTMP or RTP (SDP) as Annex-B.",
        discussion: """
        From an rtsp:// or rtmp:// URL, an SDP file, or --listen (one publisher), to -o from the first IDR \
        (FILE.y4m or --decode: decoded) and/or --hls HOST:PORT[/PATH] (served as LL-HLS). Stops after \
        --frames, --idle-timeout (--reconnect: reconnects) or SIGINT/SIGTERM (exit status 0).
        """)

    @Argument(help: "An rtsp:// or rtmp:// URL, or the SDP file describing a plain RTP stream (as written by h264 serve --sdp or ffmpeg -sdp_file).")
    var sdp: String
    @OptionGroup var options: ReceiveOptions
    @OptionGroup(title: "RTSP client") var rtsp: RTSPClientOptions
    @Flag(help: "Leave a camera's audio out (by default an rtsp:// camera's audio track is received too: written with -o FILE.mp4 or FILE.flv, said and left out of Annex-B and y4m).")
    var noAudio = false
    @OptionGroup(title: "RTSP authentication and TLS (with --listen)") var auth: ServerAccessOptions
    @OptionGroup(title: "HLS") var hls: HLSOptions

    func validate() throws {
        if !auth.users.isEmpty && !options.listen { throw ValidationError("--auth is for --listen: to send credentials, use --user") }
        if options.output == nil && hls.hls == nil { throw ValidationError("give -o FILE, --hls HOST:PORT or both") }
    }

    func run() async throws {
        try await runReportingErrors(command: "receive") {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            try await closing({ try? await group.shutdownGracefully() }) {
                try await serving(group: group) { eventLog, hls in
                    let rtmp = sdp.lowercased().hasPrefix("rtmp")
                    if options.listen && rtmp { return try await options.receiveRTMP(listeningOn: sdp, eventLog: eventLog, hls: hls, group: group) }
                    if options.listen { return try await receiveListening(eventLog: eventLog, hls: hls, group: group) }
                    if rtmp {
                        return try await options.receiveRTMP(playing: sdp, tlsTrust: rtsp.configuration().tlsTrust, eventLog: eventLog, hls: hls, group: group)
                    }
                    if RTSPURI.isAbsolute(sdp) { return try await receiveRTSP(eventLog: eventLog, hls: hls, group: group) }
                    try await receiveRTP(eventLog: eventLog, hls: hls, group: group)
                }
            }
        }
    }

    /// `h264 receive STREAM.sdp -o OUT.h264`: plain RTP on the SDP's UDP port (`RTPReceiver`).
    private func receiveRTP(eventLog: EventLog, hls: HLSLiveStream?, group: MultiThreadedEventLoopGroup) async throws {
        let description = try SessionDescription(parsingVideo: String(decoding: try CLIIO.read(sdp), as: UTF8.self))
        _ = try VideoRTPDepacketizer(description, reorderWindow: options.reorderWindow)
        let format = try? description.videoFormat()
        let receiver = try await listening("UDP port \(description.port)") {
            try await RTPReceiver.start(description: description, group: group, reorderWindow: options.reorderWindow,
                                        idleTimeout: .seconds(options.idleTimeout))
        }
        eventLog.write(.listening(url: "udp://\(receiver.localAddress?.ipAddress ?? "0.0.0.0"):\(description.port)"))
        try await closing(receiver.shutdown) {
            try await options.receive(receiver, format: format, hls: hls, opening: "listening on udp port \(description.port)", stop: receiver.shutdown) {
                receiver.ending == .idle ? "no packet for \(options.idleTimeout) s" : nil
            } statistics: { receiver.statistics }
        }
    }

    /// `h264 receive rtsp://…`: plays the URL with `RTSPClient` (the transport and credentials of
    /// `RTSPClientOptions`), then TEARDOWN.
    private func receiveRTSP(eventLog: EventLog, hls: HLSLiveStream?, group: MultiThreadedEventLoopGroup) async throws {
        var configuration = try rtsp.configuration()
        configuration.audio = !noAudio
        configuration.idleTimeout = .seconds(options.idleTimeout)
        configuration.reorderWindow = options.reorderWindow
        configuration.userAgent = "h264 receive"
        // With --reconnect, open waits for a camera that is not there yet (logging each failed
        // try). One StopSignal.catching over the wait and the recording: a signal cancels the
        // wait, or closes the client.
        let url = sdp, settings = configuration, logger = StandardErrorLogHandler.logger(command: "receive", quiet: options.quiet)
        let connecting = Task { try await RTSPClient.open(url: url, group: group, configuration: settings, logger: logger) }
        try await StopSignal.catching(onStop: {
            connecting.cancel()
            await (try? connecting.value)?.close()
        }) {
            let client: RTSPClient
            do { client = try await connecting.value } catch is CancellationError {
                return options.log("stopped before \(RTSPURI.removingUserInfo(url)) answered")
            }
            eventLog.write(ReceiveEvent.playing(url: client.url, session: client.session))
            let events = RTSPClientOptions.events(of: client, idleTimeout: options.idleTimeout, log: options.log, eventLog: eventLog)
            let opening = "playing \(client.url) (session \(client.session), RTP " + (client.udpPort.map { "on udp port \($0)" }
                ?? "on interleaved channel \(client.transport.interleavedChannels?.lowerBound ?? 0)") + ")"
            try await closing(client.close) {
                try await options.receive(events, format: try? client.sessionDescription.videoFormat(), hls: hls, opening: opening, stop: nil) {
                    let ending = RTSPClientOptions.describe(client.ending, idleTimeout: options.idleTimeout)
                    guard rtsp.reconnect else { return ending }
                    return (ending.map { $0 + "; " } ?? "") + "\(client.disconnections) disconnection(s)"
                } statistics: { client.statistics }
            }
        }
    }

    /// `h264 receive --listen rtsp://HOST:PORT/PATH -o OUT.h264`: waits for one publisher
    /// (ANNOUNCE, SETUP with `mode=record`, RECORD; `RTSPRecordServer`) and writes its stream.
    private func receiveListening(eventLog: EventLog, hls: HLSLiveStream?, group: MultiThreadedEventLoopGroup) async throws {
        var configuration = RTSPRecordServer.Configuration()
        configuration.idleTimeout = .seconds(options.idleTimeout)
        configuration.reorderWindow = options.reorderWindow
        try auth.apply(to: &configuration)
        let (server, url) = try await listening("RTSP at \(sdp)") {
            try await RTSPRecordServer.start(listeningAt: sdp, group: group, configuration: configuration,
                                             logger: StandardErrorLogHandler.logger(command: "receive", quiet: options.quiet))
        }
        FileHandle.standardError.write(Data("h264 receive: listening on \(url)\n".utf8))
        eventLog.write(.listening(url: url))
        let follower = eventLog.follow(server.server.events)
        // SIGINT/SIGTERM shut the server down, which ends the recording (or the wait for one).
        // One StopSignal.catching over both (the wait and the recording).
        try await closing({ await server.shutdown(); await follower?.value }) {
            try await StopSignal.catching(onStop: server.shutdown) {
                guard let publisher = try await server.firstPublisher() else { return }
                try await options.receive(publisher, format: try? publisher.sessionDescription.videoFormat(), hls: hls, stop: nil,
                                          whenDone: publisher.stop) {
                    nil
                } statistics: { publisher.statistics }
            }
        }
    }
}
