public import Foundation

/// nginx with the RTMP module (Debian `nginx` + `libnginx-mod-rtmp`) on a loopback port, in
/// the foreground (`daemon off; master_process off;`) from a config file written here: the
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
    /// candidate port, another one when nginx could not bind it, see ``PeerPort``; a port
    /// given restarts a server that was killed); returns once nginx holds a listening socket on
    /// it (at most 20 s). Without `record`, nothing is recorded.
    public init(in directory: URL, port: Int? = nil, record: Bool = true) throws {
        let recordDirectory = directory.appendingPathComponent("record")
        self.recordDirectory = recordDirectory
        try FileManager.default.createDirectory(at: recordDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("logs"), withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("nginx.conf")
        (process, self.port) = try PeerPort.start(.tcpListening, port: port, { port in
            try """
            load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
            daemon off;
            master_process off;
            error_log stderr info;
            pid \(directory.path)/nginx.pid;
            events { worker_connections 64; }
            rtmp { server { listen 127.0.0.1:\(port); application live { live on; \(record ? "record all; record_path \(recordDirectory.path);" : "") } } }
            """.write(to: config, atomically: true, encoding: .utf8)
            return try LoggingProcess(executable: URL(fileURLWithPath: "/usr/sbin/nginx"), ["-p", directory.path, "-c", config.path])
        }, process: \.process)
    }

    /// `rtmp://127.0.0.1:PORT/live/KEY`.
    public func url(key: String) -> String { "rtmp://127.0.0.1:\(port)/live/\(key)" }

    /// The path of the recording of `key`.
    public func recording(key: String) -> String { recordDirectory.appendingPathComponent("\(key).flv").path }

    /// Stops nginx.
    public func kill() { process.kill() }
}
