public import Foundation

/// Peers that must be told the port to bind (nginx's `listen`, `ffmpeg -listen 1`, FFmpeg or
/// GStreamer reading RTP at the port of an SDP): the port is a candidate, and the peer's own
/// socket on it is what the test waits for, read from the kernel's tables (`/proc/PID/fd` and
/// `/proc/net/{tcp,udp}`), never from its log.
///
/// Why not let them bind port 0: nginx rejects `listen 127.0.0.1:0` ("invalid port"), and with
/// a listening socket handed over in `NGINX` (its inheritance) the RTMP module of Debian's
/// nginx 1.22.1 crashes at start (SIGSEGV); FFmpeg's `tcp` protocol refuses port 0 ("Port
/// missing in uri") and its RTP demuxer binds the port its SDP names; none of them says which
/// port it took. So the candidate may be taken by someone else in between: the peer then
/// fails to bind and exits, and the next candidate is tried.
public enum PeerPort {
    /// A TCP socket in the listening state, or a bound UDP socket.
    public enum Kind: Sendable {
        case tcpListening, udp
    }

    /// What a peer waited for did.
    public struct NotBound: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts a peer with `launch(port)` on a candidate port and returns it with the port once
    /// its process holds a socket of `kind` bound to that port; if the process exits first
    /// (the port was taken: the peer could not bind it), tries another candidate, `attempts`
    /// times in all. With `port`, only that port is tried (a server started again where the
    /// one killed was).
    ///
    /// - Throws: ``NotBound`` when every try ended so, or a peer neither bound nor exited
    ///   within `timeout` seconds (it is killed).
    public static func start<Peer>(_ kind: Kind, port given: Int? = nil, attempts: Int = 5, timeout: Double = 20,
                                   _ launch: (_ port: Int) throws -> Peer, process: (Peer) -> Process) throws -> (peer: Peer, port: Int) {
        var failures: [String] = []
        for _ in 0..<(given == nil ? attempts : 1) {
            let port = try given ?? candidate(kind)
            let peer = try launch(port)
            let running = process(peer)
            var bound = false
            let decided = BoundedPolling.waitFor(seconds: timeout) {
                bound = ports(of: running.processIdentifier, kind).contains(port)
                return bound || !running.isRunning
            }
            if bound { return (peer, port) }
            guard decided else {
                running.terminate()
                throw NotBound(description: "\(running.executableURL?.lastPathComponent ?? "peer") did not bind port \(port) in \(timeout) s")
            }
            running.waitUntilExit()
            failures.append("port \(port): exited with \(running.terminationStatus)")
        }
        throw NotBound(description: "the peer bound none of its ports: \(failures)")
    }

    /// A port on 127.0.0.1 that was free a moment ago (a socket of `kind` bound to port 0 and
    /// closed): only a candidate, see ``start(_:port:attempts:timeout:_:process:)``.
    public static func candidate(_ kind: Kind) throws -> Int {
        switch kind {
        case .tcpListening: try LoopbackTCP.freePort()
        case .udp: try LoopbackUDP().port
        }
    }

    /// The local ports of the sockets of `kind` that process `pid` or one of its descendants
    /// holds (`timeout`'s child, say), as the kernel lists them, IPv4 and IPv6.
    public static func ports(of pid: Int32, _ kind: Kind) -> Set<Int> {
        var inodes: Set<Substring> = [], processes = [pid]
        while let process = processes.popLast() {
            let directory = "/proc/\(process)/fd"
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)"), target.hasPrefix("socket:[") {
                    inodes.insert(Substring(target.dropFirst(8).dropLast()))
                }
            }
            let children = (try? String(contentsOfFile: "/proc/\(process)/task/\(process)/children", encoding: .utf8)) ?? ""
            processes += children.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        guard !inodes.isEmpty else { return [] }
        let tables = kind == .udp ? ["/proc/net/udp", "/proc/net/udp6"] : ["/proc/net/tcp", "/proc/net/tcp6"]
        var ports: Set<Int> = []
        for table in tables {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
                let fields = line.split(separator: " ")
                guard fields.count > 9, inodes.contains(fields[9]),
                      kind == .udp || fields[3] == "0A", // TCP_LISTEN
                      let colon = fields[1].lastIndex(of: ":"),
                      let port = Int(fields[1][fields[1].index(after: colon)...], radix: 16) else { continue }
                ports.insert(port)
            }
        }
        return ports
    }
}
