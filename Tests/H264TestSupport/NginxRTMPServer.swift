public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// nginx with the RTMP module (Debian `nginx` + `libnginx-mod-rtmp`) on a free loopback port,
/// in the foreground (`daemon off; master_process off;`) from a config file written here: the
/// application `live` relays what is published (`live on`) and records everything (`record all`)
/// as `KEY.flv` in ``recordDirectory``.
public final class NginxRTMPServer: Sendable {
    /// The nginx process (its log on standard error: `error_log stderr info`).
    public let process: LoggingProcess
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// Where the recordings go.
    public let recordDirectory: URL

    /// Starts nginx with its config, pid file and recordings in `directory`, on `port` (nil: a
    /// free one; a port given restarts a server that was killed); returns once it accepts a
    /// connection (polled for at most 10 s). Without `record`, nothing is recorded.
    public init(in directory: URL, port: Int? = nil, record: Bool = true) throws {
        self.port = try port ?? LoopbackTCP.freePort()
        recordDirectory = directory.appendingPathComponent("record")
        try FileManager.default.createDirectory(at: recordDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("logs"), withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("nginx.conf")
        try """
        load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
        daemon off;
        master_process off;
        error_log stderr info;
        pid \(directory.path)/nginx.pid;
        events { worker_connections 64; }
        rtmp { server { listen 127.0.0.1:\(self.port); application live { live on; \(record ? "record all; record_path \(recordDirectory.path);" : "") } } }
        """.write(to: config, atomically: true, encoding: .utf8)
        process = try LoggingProcess(executable: URL(fileURLWithPath: "/usr/sbin/nginx"), ["-p", directory.path, "-c", config.path],
                                     isReady: { _ in true })
        // Ready once it accepts a connection (closed at once, before any handshake).
        let port = self.port
        let listening = BoundedPolling.waitFor(seconds: 10) {
            guard let socket = try? LoopbackTCP.connect(port: port) else { return false }
            close(socket)
            return true
        }
        guard listening else {
            process.kill()
            throw LoopbackError("nginx did not listen: \(process.stderr)")
        }
    }

    /// `rtmp://127.0.0.1:PORT/live/KEY`.
    public func url(key: String) -> String { "rtmp://127.0.0.1:\(port)/live/\(key)" }

    /// The path of the recording of `key`.
    public func recording(key: String) -> String { recordDirectory.appendingPathComponent("\(key).flv").path }

    /// Stops nginx.
    public func kill() { process.kill() }
}
