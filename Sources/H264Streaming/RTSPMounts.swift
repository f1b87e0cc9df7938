import H264
import HEVC
import NIOCore
import RTP

/// The mount table of an ``RTSPServer``, shared by its connections: what plays at each path
/// (a ``Broadcaster`` and its format) and where publishers record (an `RTSPRecording`), and
/// who may use each path (its ``RTSPServer/Authentication``, when it has its own).
final class RTSPMounts: Sendable {
    /// What plays at one path.
    struct Mount: Sendable {
        let broadcaster: Broadcaster
        let format: VideoFormatDescription
        /// The audio track described to players (its control `track2`); nil: video only.
        var audio: AudioMediaDescription? = nil
    }

    /// A path's use: played from, or recorded to.
    enum Entry: Sendable {
        case play(Mount)
        /// The recording lives on the server's event loop, as do all its connections.
        case record(NIOLoopBoundBox<RTSPRecording>)

        /// The methods a connection may send for this path.
        var methods: [String] {
            switch self {
            case .play: RTSPConnectionHandler.playMethods
            case .record: RTSPConnectionHandler.recordMethods
            }
        }
    }

    private let table = Locked([String: Entry]())
    /// The paths with their own authentication.
    private let authentications = Locked([String: RTSPServer.Authentication]())

    /// `path` with one leading `/` and no trailing one.
    static func normalized(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed.hasPrefix("/") ? String(trimmed) : "/" + trimmed
    }

    /// Mounts `mount` to play at `path` (nil: unmounts), with its own `authentication` or the server's.
    func set(_ path: String, _ mount: Mount?, authentication: RTSPServer.Authentication? = nil) {
        set(path, entry: mount.map { .play($0) }, authentication: authentication)
    }

    /// Sets `path`'s entry (nil: unmounts) and its own authentication (nil: the server's);
    /// returns the entry it replaces.
    @discardableResult
    func set(_ path: String, entry: Entry?, authentication: RTSPServer.Authentication? = nil) -> Entry? {
        authentications.withLock { $0[path] = authentication }
        return table.withLock { table in
            let old = table[path]
            table[path] = entry
            return old
        }
    }

    /// The authentication of the mount path `path`, when it has its own.
    func authentication(at path: String) -> RTSPServer.Authentication? {
        authentications.withLock { $0[path] }
    }

    /// Every entry.
    var entries: [Entry] { table.withLock { Array($0.values) } }

    /// The methods for a request naming no mount (`*`, or an unknown path): those of the kinds
    /// of path mounted (play's when nothing is).
    var methods: [String] {
        let entries = entries
        let records = entries.contains { if case .record = $0 { true } else { false } }
        let plays = entries.contains { if case .play = $0 { true } else { false } }
        switch (plays, records) {
        case (false, true): return RTSPConnectionHandler.recordMethods
        case (true, true): return RTSPConnectionHandler.playMethods + ["ANNOUNCE", "RECORD"]
        default: return RTSPConnectionHandler.playMethods
        }
    }

    /// The entry a request path names: a play path itself, with a trailing `/`, or its track
    /// (`/PATH/track1`); a record path or anything below it (its tracks, as the publisher's
    /// SDP names them).
    func find(_ requestPath: Substring) -> (path: String, entry: Entry)? {
        var path = Substring(requestPath)
        let key = Self.normalized(String(path))
        return table.withLock { table in
            if let entry = table[key] { return (key, entry) }
            if let track = ["/track1", "/track2"].first(where: { path.hasSuffix($0) }) {
                path = path.dropLast(track.count)
                let parent = Self.normalized(String(path))
                if case .play = table[parent] { return (parent, table[parent]!) }
            }
            var ancestor = Substring(key)
            while let slash = ancestor.lastIndex(of: "/") {
                ancestor = ancestor[..<slash]
                let candidate = ancestor.isEmpty ? "/" : String(ancestor)
                if let entry = table[candidate], case .record = entry { return (candidate, entry) }
            }
            return nil
        }
    }
}
