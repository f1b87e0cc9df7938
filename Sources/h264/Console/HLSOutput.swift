import Foundation
import H264Streaming
import NIOCore

/// `--hls`: the HTTP server of `serve`, `relay` and `receive` with its one stream mounted at the
/// option's path, and the sink that feeds it from the broadcaster (`receive` appends to it).
struct HLSOutput {
    /// The listening server.
    let server: HLSServer
    /// The stream it serves.
    let stream: HLSLiveStream
    /// The playlist's URL (`http://HOST:PORT/live/index.m3u8`, the bound port).
    let url: String

    /// Starts the server of `options` (nil without `--hls`), says `HLS playlist at URL` on
    /// standard error and writes it as a `listening` event.
    static func start(_ options: HLSOptions, group: any EventLoopGroup, eventLog: EventLog, command: String) async throws -> HLSOutput? {
        guard let (host, port, path) = try options.address() else { return nil }
        let server: HLSServer
        do { server = try await HLSServer.start(host: host, port: port, group: group) } catch {
            throw CLIError("cannot listen on \(host):\(port) for HLS: \(error)")
        }
        let stream = HLSLiveStream(options.configuration)
        server.mount(path: path, stream: stream)
        let url = server.url(host: host, path: path)
        FileHandle.standardError.write(Data("h264 \(command): HLS playlist at \(url)\n".utf8))
        eventLog.write(.listening(url: url))
        return HLSOutput(server: server, stream: stream, url: url)
    }

    /// The sink that packages the broadcaster's frames into the stream.
    var sink: HLSSink { HLSSink(stream) }

    /// Ends the stream (`EXT-X-ENDLIST`) and shuts the server down (`receive`'s end).
    func finish() async {
        try? stream.finish()
        await server.shutdown()
    }
}
