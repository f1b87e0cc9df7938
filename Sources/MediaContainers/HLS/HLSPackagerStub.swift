// THROWAWAY STUB of the lead's HLSPackager API (issue 37), only so the hls-server branch compiles
// before the real packager lands on main. Deleted before `git merge main`.
public import MediaCore

public struct HLSPackager: Sendable {
    public struct Configuration: Sendable, Hashable {
        public var segmentDuration: Duration
        public var partDuration: Duration?
        public var windowSegments: Int
        public init(segmentDuration: Duration = .seconds(2), partDuration: Duration? = .milliseconds(200), windowSegments: Int = 7) {
            (self.segmentDuration, self.partDuration, self.windowSegments) = (segmentDuration, partDuration, windowSegments)
        }
    }
    private let configuration: Configuration
    private var segments: [[[UInt8]]] = []   // closed segments, their parts
    private var open: [[UInt8]] = []         // parts of the open segment
    private var started = false
    private var finished = false
    public init(_ configuration: Configuration = .init()) { self.configuration = configuration }

    public mutating func append(_ frame: CompressedFrame, wallClock: Duration) throws(MediaError) -> Bool {
        if !started { guard frame.isKeyframe else { return false }; started = true; open = [frame.data]; return true }
        if frame.isKeyframe { segments.append(open); open = [] }
        open.append(frame.data)
        return true
    }

    public mutating func finish() throws(MediaError) {
        if started { segments.append(open); open = [] }
        finished = true
    }

    public func playlist(for request: HLSPlaylistRequest) -> HLSPlaylistAnswer {
        guard started else { return .wait }
        let msn = segments.count, part = open.count - 1
        if let m = request.mediaSequence {
            if m > msn + 2 { return .badRequest("msn too far ahead") }
            let p = request.part ?? 0
            if !finished, m > msn || (m == msn && (request.part == nil || p > part)) { return .wait }
        }
        var text = "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-MAP:URI=\"init-0.mp4\"\n"
        for (n, parts) in segments.enumerated() {
            for i in parts.indices { text += "#EXT-X-PART:DURATION=0.04,URI=\"part-\(n)-\(i).m4s\"\n" }
            text += "#EXTINF:1.0,\nseg-\(n).m4s\n"
        }
        if finished { return .playlist(text + "#EXT-X-ENDLIST\n") }
        for i in open.indices { text += "#EXT-X-PART:DURATION=0.04,URI=\"part-\(msn)-\(i).m4s\"\n" }
        text += "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part-\(msn)-\(open.count).m4s\"\n"
        return .playlist(text)
    }

    public func resource(named name: String) -> HLSResourceState {
        if name == "init-0.mp4" { return started ? .available(.init(bytes: [0], contentType: "video/mp4", isImmutable: true)) : .upcoming }
        let pieces = name.split(separator: ".").first.map { $0.split(separator: "-") } ?? []
        if pieces.count == 2, pieces[0] == "seg", let n = Int(pieces[1]) {
            if n < segments.count { return .available(.init(bytes: segments[n].flatMap { $0 }, contentType: "video/iso.segment", isImmutable: true)) }
            return n <= segments.count + 1 && !finished ? .upcoming : .missing
        }
        if pieces.count == 3, pieces[0] == "part", let n = Int(pieces[1]), let i = Int(pieces[2]) {
            let parts = n < segments.count ? segments[n] : n == segments.count ? open : []
            if i < parts.count { return .available(.init(bytes: parts[i], contentType: "video/iso.segment", isImmutable: true)) }
            return n == segments.count && i == open.count && !finished ? .upcoming : .missing
        }
        return .missing
    }
}
public struct HLSPlaylistRequest: Sendable, Hashable {
    public var mediaSequence: Int?
    public var part: Int?
    public var skip: Bool
    public var isMalformed: Bool
    public init(query: String) {
        (mediaSequence, part, skip, isMalformed) = (nil, nil, false, false)
        for item in query.split(separator: "&") {
            let kv = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2 else { continue }
            switch kv[0] {
            case "_HLS_msn": mediaSequence = Int(kv[1]); if mediaSequence == nil { isMalformed = true }
            case "_HLS_part": part = Int(kv[1]); if part == nil { isMalformed = true }
            case "_HLS_skip": skip = kv[1] == "YES" || kv[1] == "v2"
            default: break
            }
        }
        if part != nil, mediaSequence == nil { isMalformed = true }
    }
}
public enum HLSPlaylistAnswer: Sendable, Hashable {
    case playlist(String)
    case wait
    case badRequest(String)
}
public enum HLSResourceState: Sendable, Hashable {
    case available(HLSResource)
    case upcoming
    case missing
}
public struct HLSResource: Sendable, Hashable {
    public var bytes: [UInt8]
    public var contentType: String
    public var isImmutable: Bool
    public init(bytes: [UInt8], contentType: String, isImmutable: Bool) { (self.bytes, self.contentType, self.isImmutable) = (bytes, contentType, isImmutable) }
}
