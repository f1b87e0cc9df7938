/// A YUV4MPEG2 (`.y4m`) stream: the header, then frames. What `ffmpeg -f yuv4mpegpipe`
/// writes and x264 reads.
///
/// Format: a header line `YUV4MPEG2 W<width> H<height> F<num>:<den> I<p|t|b|m|?>
/// A<num>:<den> C<colorspace> X<comment>…` ending in `\n`, then for each frame a line starting
/// with `FRAME` (with optional parameters) and the frame's planes. Only 8-bit 4:2:0 is
/// accepted (C420, C420jpeg, C420paldv, C420mpeg2 — the chroma siting differs, the layout does
/// not; no C tag means 420jpeg), progressive or unknown interlacing; mono and 4:2:2/4:4:4 are
/// rejected with a clear error. Parsing works on bytes and throws, so it can be fuzzed.
struct Y4MHeader: Equatable {
    var width: Int
    var height: Int
    var frameRateNumerator: Int
    var frameRateDenominator: Int
    var colorspace: String

    /// The frame rate in frames per second.
    var frameRate: Double { Double(frameRateNumerator) / Double(frameRateDenominator) }
    /// The bytes of one frame's planes (I420).
    var frameBytes: Int { width * height * 3 / 2 }

    static let accepted: Set<String> = ["420", "420jpeg", "420paldv", "420mpeg2"]

    /// Parses the header line (without its `\n`).
    static func parse(_ line: ArraySlice<UInt8>) throws(Y4MError) -> Y4MHeader {
        let text = String(decoding: line, as: UTF8.self)
        var fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.first == "YUV4MPEG2" else { throw Y4MError("not a y4m stream: the header must start with YUV4MPEG2") }
        fields.removeFirst()
        var width: Int?, height: Int?
        var rate = (30, 1)
        var colorspace = "420jpeg"
        for field in fields {
            let tag = field.first!
            let value = field.dropFirst()
            switch tag {
            case "W":
                guard let w = Int(value), (1...16_384).contains(w) else { throw Y4MError("bad width W\(value) (1…16384)") }
                width = w
            case "H":
                guard let h = Int(value), (1...16_384).contains(h) else { throw Y4MError("bad height H\(value) (1…16384)") }
                height = h
            case "F":
                let parts = value.split(separator: ":")
                guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n > 0, d > 0, n <= 1_000_000, d <= 1_000_000,
                      Double(n) / Double(d) <= 1000, Double(n) / Double(d) >= 0.1
                else { throw Y4MError("bad frame rate F\(value) (n:d, 0.1…1000 fps)") }
                rate = (n, d)
            case "I":
                guard value == "p" || value == "?" else {
                    throw Y4MError("interlaced input I\(value) is not supported (progressive only)")
                }
            case "C":
                let c = String(value)
                guard accepted.contains(c) else {
                    throw Y4MError("unsupported chroma format C\(c): only 8-bit 4:2:0 (420, 420jpeg, 420paldv, 420mpeg2)")
                }
                colorspace = c
            case "A", "X":
                break
            default:
                throw Y4MError("unknown header field \(field)")
            }
        }
        guard let width else { throw Y4MError("the header has no width (W)") }
        guard let height else { throw Y4MError("the header has no height (H)") }
        guard width % 2 == 0, height % 2 == 0 else { throw Y4MError("\(width)×\(height): 4:2:0 needs an even width and height") }
        return Y4MHeader(width: width, height: height, frameRateNumerator: rate.0, frameRateDenominator: rate.1, colorspace: colorspace)
    }
}

/// A y4m or raw-video input problem, with a one-line message.
struct Y4MError: Error, CustomStringConvertible, Equatable {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Where bytes come from: `read(max)` returns up to `max` bytes, empty at the end.
protocol ByteSource {
    mutating func read(upTo count: Int) throws -> [UInt8]
}

/// An in-memory source (tests, fuzzing).
struct BufferSource: ByteSource {
    var bytes: [UInt8]
    var position = 0
    mutating func read(upTo count: Int) -> [UInt8] {
        let end = min(bytes.count, position + count)
        defer { position = end }
        return Array(bytes[position..<end])
    }
}

/// Reads frames from y4m (header + FRAME lines) or raw I420 (no headers).
struct FrameReader<Source: ByteSource> {
    enum Layout { case y4m, rawI420 }
    private var source: Source
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    let layout: Layout
    private(set) var header: Y4MHeader
    private(set) var framesRead = 0
    private(set) var bytesRead = 0

    /// Opens a y4m stream: reads and parses its header.
    init(y4m source: Source) throws {
        self.source = source
        layout = .y4m
        header = Y4MHeader(width: 0, height: 0, frameRateNumerator: 30, frameRateDenominator: 1, colorspace: "420")
        guard let line = try readLine(limit: 4096) else {
            throw Y4MError(buffered == 0 ? "empty input: no y4m header" : "truncated y4m header (no end of line)")
        }
        header = try Y4MHeader.parse(line[...])
    }

    /// Opens raw I420 of the given size and rate.
    init(rawI420 source: Source, width: Int, height: Int, frameRateNumerator: Int, frameRateDenominator: Int) {
        self.source = source
        layout = .rawI420
        header = Y4MHeader(width: width, height: height, frameRateNumerator: frameRateNumerator,
                           frameRateDenominator: frameRateDenominator, colorspace: "420")
    }

    private var buffered: Int { buffer.count - start }

    private mutating func fill(_ wanted: Int) throws {
        while buffered < wanted && !atEnd {
            let chunk = try source.read(upTo: max(1 << 20, wanted - buffered))
            if chunk.isEmpty { atEnd = true; break }
            if start > 0 && start >= buffer.count / 2 {
                buffer.removeFirst(start)
                start = 0
            }
            buffer.append(contentsOf: chunk)
            bytesRead += chunk.count
        }
    }

    /// A line without its `\n`; nil at the end or when no `\n` comes within `limit` bytes.
    private mutating func readLine(limit: Int) throws -> [UInt8]? {
        var scanned = 0
        while true {
            if let i = buffer[(start + scanned)...].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<i])
                start = i + 1
                return line
            }
            scanned = buffered
            if scanned >= limit || atEnd { return nil }
            try fill(buffered + 1)
            if buffered == scanned { return nil }
        }
    }

    /// The next frame's I420 bytes, or nil at the end of the input.
    mutating func nextFrame() throws -> [UInt8]? {
        let size = header.frameBytes
        if layout == .y4m {
            try fill(1)
            if buffered == 0 { return nil }
            guard let line = try readLine(limit: 1024) else {
                throw Y4MError("truncated y4m: frame \(framesRead + 1) has an incomplete FRAME line")
            }
            guard line.starts(with: Array("FRAME".utf8)), line.count == 5 || line[5] == 0x20 else {
                throw Y4MError("malformed y4m: frame \(framesRead + 1) does not start with FRAME")
            }
        }
        try fill(size)
        if layout == .rawI420 && buffered == 0 { return nil }
        guard buffered >= size else {
            throw Y4MError("truncated input: frame \(framesRead + 1) has \(buffered) of \(size) bytes")
        }
        let frame = Array(buffer[start..<(start + size)])
        start += size
        framesRead += 1
        return frame
    }
}
