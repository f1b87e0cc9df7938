/// Where bytes come from: `read(into:)` fills up to the whole buffer and returns how many
/// bytes it wrote, 0 at the end.
protocol ByteSource {
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// An in-memory source (tests, fuzzing). `chunk` limits each read, to exercise short reads.
struct BufferSource: ByteSource {
    let bytes: [UInt8]
    private(set) var position = 0
    /// The most one read returns.
    let chunk: Int

    init(bytes: [UInt8], chunk: Int = .max) {
        self.bytes = bytes
        self.chunk = max(1, chunk)
    }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, bytes.count - position, chunk)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + position, byteCount: count)
        }
        position += count
        return count
    }
}

/// Reads frames from y4m (header + FRAME lines) or raw I420 (no headers).
///
/// Frame bytes go straight from the source into the caller's buffer (``readFrame(into:)``):
/// only the few bytes read ahead with a `FRAME` line are copied, so a caller that reuses its
/// buffers reads video without allocating or faulting in fresh memory per frame.
struct FrameReader<Source: ByteSource> {
    enum Layout { case y4m, rawI420 }
    private var source: Source
    /// Bytes read from the source ahead of what was consumed: `buffer[start..<end]`.
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEnd = false
    let layout: Layout
    private(set) var header: Y4MHeader
    private(set) var framesRead = 0
    private(set) var bytesRead = 0
    /// How much a line read asks of the source at once.
    private static var readAhead: Int { 1 << 16 }

    /// Opens a y4m stream: reads and parses its header.
    init(y4m source: Source) throws {
        self.source = source
        buffer = [UInt8](repeating: 0, count: Self.readAhead)
        layout = .y4m
        header = Y4MHeader(width: 0, height: 0, frameRateNumerator: 30, frameRateDenominator: 1, colorspace: "420")
        guard let line = try readLine(limit: 4096) else {
            throw CLIError(buffered == 0 ? .emptyInput : .truncatedHeader, buffered == 0 ? "empty input: no y4m header" : "truncated y4m header (no end of line)")
        }
        header = try Y4MHeader.parse(line[...])
    }

    /// Opens raw I420 of the given size and rate.
    init(rawI420 source: Source, width: Int, height: Int, frameRateNumerator: Int, frameRateDenominator: Int) {
        self.source = source
        buffer = [UInt8](repeating: 0, count: Self.readAhead)
        layout = .rawI420
        header = Y4MHeader(width: width, height: height, frameRateNumerator: frameRateNumerator,
                           frameRateDenominator: frameRateDenominator, colorspace: "420")
    }

    private var buffered: Int { end - start }

    /// Reads from the source until `wanted` bytes are buffered or the source ends.
    private mutating func fill(_ wanted: Int) throws {
        while buffered < wanted && !atEnd {
            if start > 0 {
                // Keep the unread bytes at the front (a few bytes of a line, usually).
                let count = buffered
                buffer.withUnsafeMutableBytes { b in
                    if count > 0 { b.baseAddress!.copyMemory(from: b.baseAddress! + start, byteCount: count) }
                }
                start = 0
                end = count
            }
            if buffer.count - end < Self.readAhead / 2 || buffer.count < wanted {
                buffer += [UInt8](repeating: 0, count: max(wanted, buffer.count))
            }
            let read = try buffer.withUnsafeMutableBytes { b in
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: b[end...]))
            }
            if read == 0 { atEnd = true; break }
            end += read
            bytesRead += read
        }
    }

    /// A line without its `\n`; nil at the end or when no `\n` comes within `limit` bytes
    /// (whatever sizes the source's reads come in).
    private mutating func readLine(limit: Int) throws -> [UInt8]? {
        var scanned = 0
        while true {
            let window = min(end, start + limit)
            if let i = buffer[(start + scanned)..<window].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<i])
                start = i + 1
                return line
            }
            scanned = window - start
            if scanned >= limit || atEnd { return nil }
            try fill(buffered + 1)
            if buffered <= scanned { return nil }
        }
    }

    /// Reads the `FRAME` line, if the layout has one; false at the end of the input.
    private mutating func startFrame() throws -> Bool {
        guard layout == .y4m else { return true }
        try fill(1)
        if buffered == 0 { return false }
        guard let line = try readLine(limit: 1024) else {
            throw CLIError(.truncatedFrameHeader, "truncated y4m: frame \(framesRead + 1) has an incomplete FRAME line")
        }
        guard line.starts(with: Array("FRAME".utf8)), line.count == 5 || line[5] == 0x20 else {
            throw CLIError(.badFrameHeader, "malformed y4m: frame \(framesRead + 1) does not start with FRAME")
        }
        return true
    }

    /// Reads the next frame's I420 bytes into `frame` (resized to the frame size if it is not
    /// already): the bytes buffered with the `FRAME` line are copied, the rest is read from the
    /// source in place. Returns false at the end of the input.
    mutating func readFrame(into frame: inout [UInt8]) throws -> Bool {
        let size = header.frameBytes
        guard try startFrame() else { return false }
        if frame.count != size { frame = [UInt8](repeating: 0, count: size) }
        let copied = min(buffered, size)
        var filled = copied
        try frame.withUnsafeMutableBytes { (destination: UnsafeMutableRawBufferPointer) throws in
            if copied > 0 {
                buffer.withUnsafeBytes { b in
                    destination.baseAddress!.copyMemory(from: b.baseAddress! + start, byteCount: copied)
                }
            }
            while filled < size && !atEnd {
                let read = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: destination[filled...]))
                if read == 0 { atEnd = true } else { filled += read; bytesRead += read }
            }
        }
        start += copied
        if layout == .rawI420 && filled == 0 { return false }
        guard filled == size else {
            throw CLIError(.truncatedFrame, "truncated input: frame \(framesRead + 1) has \(filled) of \(size) bytes")
        }
        framesRead += 1
        return true
    }

    /// The next frame's I420 bytes in a new array, or nil at the end of the input.
    mutating func nextFrame() throws -> [UInt8]? {
        var frame: [UInt8] = []
        return try readFrame(into: &frame) ? frame : nil
    }
}
