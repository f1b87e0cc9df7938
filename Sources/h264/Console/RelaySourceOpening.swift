import Foundation
import H264Streaming
import Logging
import MediaContainers
import MediaCore
import NIOPosix

extension RelayCommand {
    /// The source's frames: the camera or RTMP stream played, the file's player, or the first
    /// publisher (RTSP or RTMP; waited for, a signal ending the wait); `closeSource` then tears it down.
    func open(group: MultiThreadedEventLoopGroup, eventLog: EventLog, logger: Logger,
              closeSource: inout @Sendable () async -> Void) async throws -> RelaySource {
        if let listen = options.listen, listen.lowercased().hasPrefix("rtmp") { // one RTMP publisher to that application and key
            let (server, url) = try await startRTMPIngest(listen, group: group, logger: logger)
            closeSource = server.shutdown
            Self.announce(url, eventLog)
            guard let publisher = try await server.firstPublisher() else { throw CLIError("stopped before a publisher came") }
            return .rtmp(publisher)
        }
        if let source, source.lowercased().hasPrefix("rtmp") {
            let configuration = RTMPPlayer.Configuration(tlsTrust: try client.configuration().tlsTrust, reconnect: client.reconnection)
            let player = try await RTMPPlayer.connect(to: source, group: group, configuration: configuration, logger: logger)
            closeSource = { player.stop() }
            return .rtmp(player)
        }
        if let listen = options.listen {
            let (server, url) = try await listening("RTSP at \(listen)") {
                try await RTSPRecordServer.start(listeningAt: listen, group: group, configuration: auth.serverConfiguration(), logger: logger)
            }
            let follower = eventLog.follow(server.server.events) // the publisher's session
            closeSource = { await server.shutdown(); await follower?.value }
            Self.announce(url, eventLog)
            guard let publisher = try await StopSignal.catching(onStop: server.shutdown, server.firstPublisher) else {
                throw CLIError("stopped before a publisher came")
            }
            return .publisher(publisher)
        }
        guard let source else { throw CLIError("no SOURCE") }
        if RTSPURI.isAbsolute(source) {
            var configuration = try client.configuration()
            configuration.userAgent = "h264 relay"
            configuration.audio = !audio.noAudio
            let client = try await RTSPClient.open(url: source, group: group, configuration: configuration, logger: logger)
            closeSource = client.close
            return .camera(client)
        }
        guard FileManager.default.isReadableFile(atPath: source) else { throw CLIError("cannot read \(source)") }
        if let handle = FileHandle(forReadingAtPath: source), MP4Reader.isMP4([UInt8]((try? handle.read(upToCount: 8)) ?? Data())) {
            try? handle.close()
            return .file(try CLIError.named(source) { () throws(MediaError) in try MP4FilePlayer(path: source, loops: options.loop, eventLoop: group.next()) })
        }
        return .file(AnnexBFilePlayer(path: source, framesPerSecond: options.fps, loops: options.loop, eventLoop: group.next()))
    }

}
