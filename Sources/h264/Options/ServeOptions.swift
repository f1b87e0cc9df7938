import ArgumentParser
import Foundation
import H264
import HEVC
import H264Streaming
import Logging
import NIOCore

/// Where `h264 serve` sends its stream: with `--port` the TCP fan-out, with `--rtp` and
/// `--rtsp` plain RTP and an RTSP server (at least one of them, or `--rtmp`: ServeCommand
/// checks).
struct ServeOutputOptions: ParsableArguments {
    @Option(help: "Serve raw Annex-B over TCP on this port (0: any free port; the address is printed on standard error).") var port: Int?
    @Option(help: "Address the --port server listens on.") var host = "127.0.0.1"
    @Option(help: "Frames a client may have in flight before it is skipped to the next IDR (default: one second's worth).")
    var clientQueueFrames: Int?
    @Option(help: "Kernel send buffer per client in bytes (SO_SNDBUF; default: the system's). Smaller keeps slow clients closer to live.")
    var sendBufferSize: Int?
    @Flag(help: "Open every picture with an access unit delimiter.") var accessUnitDelimiters = false
    @Option(help: "Also send the stream as plain RTP (RFC 6184, 1200-byte packets) to udp://HOST:PORT.") var rtp: String?
    @Option(help: "With --rtp: write the stream's SDP to this file (ffplay -protocol_whitelist file,udp,rtp FILE).") var sdp: String?
    @Option(help: "Also serve the stream over RTSP at rtsp://HOST:PORT/live (RTP over TCP or UDP; port 0: any free port, printed).")
    var rtsp: String?
    @Option(help: "Write the listening addresses, viewers and RTSP sessions as JSON lines to this file ('-': standard output).")
    var events: String?
    @Flag(help: "With --rtmp: when the connection drops, publish again (after 1 s, doubling up to 30 s), from the next IDR.") var reconnect = false

    func validate() throws {
        if let port, !(0...65_535).contains(port) { throw ValidationError("--port must be 0…65535") }
        if sdp != nil && rtp == nil { throw ValidationError("--sdp describes the --rtp stream: give --rtp too") }
        if let clientQueueFrames, clientQueueFrames < 1 { throw ValidationError("--client-queue-frames must be at least 1") }
        if let sendBufferSize, !(1024...(64 << 20)).contains(sendBufferSize) { throw ValidationError("--send-buffer-size must be 1024…67108864") }
    }

    /// `--rtp udp://HOST:PORT` (an IPv4 address or `localhost`) as host and port; nil without it.
    func rtpDestination() throws -> (host: String, port: Int)? {
        guard let url = rtp else { return nil }
        guard url.hasPrefix("udp://"), url.dropFirst(6).contains(":"), let (named, port) = try? RTSPURI.hostAndPort(of: "rtsp://" + url.dropFirst(6)) else {
            throw CLIError("--rtp wants udp://HOST:PORT, not \(url)")
        }
        let host = named == "localhost" ? "127.0.0.1" : named
        guard (try? SocketAddress(ipAddress: host, port: port))?.protocol == .inet else { throw CLIError("--rtp: \(host) is not an IPv4 address") }
        return (host, port)
    }

    /// `--rtsp HOST:PORT` (port 0 takes a free one, `[::1]:PORT` for IPv6, no host: every
    /// address) as host and port; nil without it.
    func rtspAddress() throws -> (host: String, port: Int)? {
        guard let address = rtsp else { return nil }
        guard address.contains(":"), let parsed = try? RTSPURI.hostAndPort(of: "rtsp://" + (address.hasPrefix(":") ? "0.0.0.0" : "") + address,
                                                                      allowingPortZero: true) else {
            throw CLIError("--rtsp wants HOST:PORT, not \(address)")
        }
        return parsed
    }

    /// With `--rtp`: the RTP sender.
    func startRTP(group: any EventLoopGroup) async throws -> RTPSender? {
        guard let (host, port) = try rtpDestination() else { return nil }
        do {
            return try await RTPSender.start(host: host, port: port, group: group, maximumTransmissionUnit: 1200)
        } catch {
            throw CLIError("--rtp: cannot open a UDP socket (\(error))")
        }
    }

    /// With `--rtsp`: the RTSP server playing the stream at `/live` to the viewers `auth`
    /// lets in, its URL printed on standard error (always) and written to `eventLog`.
    func startRTSP(group: any EventLoopGroup, broadcaster: Broadcaster, format: VideoFormatDescription, auth: ServerAccessOptions,
                   logger: Logger, eventLog: EventLog) async throws -> RTSPServer? {
        guard let (host, port) = try rtspAddress() else { return nil }
        var configuration = RTSPServer.Configuration()
        configuration.sendBufferSize = sendBufferSize
        try auth.apply(to: &configuration)
        let server: RTSPServer
        do {
            server = try await RTSPServer.start(host: host, port: port, group: group, configuration: configuration, logger: logger)
        } catch {
            throw CLIError("cannot listen for RTSP on \(rtsp ?? ""): \(error)")
        }
        server.mount("/live", broadcaster: broadcaster, format: format)
        FileHandle.standardError.write(Data("h264 serve: listening on \(server.url(host: host, path: "/live"))\n".utf8))
        eventLog.write(.listening(url: server.url(host: host, path: "/live")))
        return server
    }
}
