public import H264

/// Where bytes come from, for ``Y4MFrameReader``: a file descriptor, a pipe, memory.
public protocol ByteSource {
    /// Reads up to `buffer.count` bytes into `buffer`.
    ///
    /// - Parameter buffer: where the bytes go.
    /// - Returns: how many bytes were written, 0 at the end of the input.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A ``ByteSource`` over bytes in memory (tests, fuzzing). `chunk` limits each read, to
/// exercise short reads.
public struct BufferSource: ByteSource, Sendable {
    /// The whole input.
    public let bytes: [UInt8]
    /// How many bytes were read so far.
    public private(set) var position = 0
    /// The most one read returns.
    public let chunk: Int

    /// A source of `bytes`, at most `chunk` of them a read.
    ///
    /// - Parameters:
    ///   - bytes: the input.
    ///   - chunk: the most one read returns (at least 1).
    public init(bytes: [UInt8], chunk: Int = .max) {
        self.bytes = bytes
        self.chunk = max(1, chunk)
    }

    /// Copies the next bytes into `buffer`.
    ///
    /// - Parameter buffer: where the bytes go.
    /// - Returns: how many bytes were copied, 0 at the end.
    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, bytes.count - position, chunk)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + position, byteCount: count)
        }
        position += count
        return count
    }
}

/// Reads frames from y4m (header + FRAME lines) or raw I420 (no headers) out of a
/// ``ByteSource``: the reading loop around ``Y4MReader``, which does the parsing.
///
/// Frame bytes go straight from the source into the caller's buffer (``readFrame(into:)``):
/// only the few bytes read ahead with a `FRAME` line are copied, so a caller that reuses its
/// buffers reads video without allocating or faulting in fresh memory per frame. Errors are the
/// source's own, or `MediaError` values with the y4m codes (`truncatedFrame` …).
public struct Y4MFrameReader<Source: ByteSource> {
    private var source: Source
    private var parser: Y4MReader
    /// Bytes read from the source ahead of what was consumed: `buffer[start..<end]`.
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// The stream's header (for raw I420, made from the size and rate given).
    public private(set) var header: Y4MHeader
    /// How many whole frames were read.
    public var framesRead: Int { parser.framesRead }
    /// How many bytes were read from the source.
    public private(set) var bytesRead = 0
    /// How much a read asks of the source at once.
    private static var readAhead: Int { 1 << 16 }

    /// Opens a y4m stream: reads and parses its header.
    ///
    /// - Parameter source: the y4m bytes.
    /// - Throws: the source's error, or an `MediaError` for a bad header.
    public init(y4m source: Source) throws {
        self.source = source
        buffer = [UInt8](repeating: 0, count: Self.readAhead)
        parser = Y4MReader()
        header = Y4MHeader(width: 0, height: 0, frameRate: FrameRate(numerator: 30, denominator: 1))
        guard case .header = try step() else { preconditionFailure("a y4m stream begins with its header") }
        header = parser.header!
    }

    /// Opens raw I420 of the given size and rate.
    ///
    /// - Parameters:
    ///   - source: the planes of each frame, back to back.
    ///   - width: the picture width.
    ///   - height: the picture height.
    ///   - frameRate: the frame rate.
    public init(rawI420 source: Source, width: Int, height: Int, frameRate: FrameRate) {
        self.source = source
        buffer = [UInt8](repeating: 0, count: Self.readAhead)
        parser = Y4MReader(rawI420: width, height: height, frameRate: frameRate)
        header = parser.header!
    }

    private var buffered: Int { end - start }

    /// The parser's next step over the buffered bytes, reading more until it has one; what it
    /// consumed is dropped.
    private mutating func step() throws -> Y4MReader.Step {
        while true {
            let step = try buffer.withUnsafeBytes { b throws(MediaError) in
                try parser.step(UnsafeRawBufferPointer(rebasing: b[start..<end]), isComplete: atEnd)
            }
            switch step {
            case .needMoreBytes: try fill(buffered + 1)
            case .header(let consumed), .frame(let consumed): start += consumed; return step
            case .end: return step
            }
        }
    }

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

    /// Reads the next frame's I420 bytes into `frame` (resized to the frame size if it is not
    /// already): the bytes buffered with the `FRAME` line are copied, the rest is read from the
    /// source in place.
    ///
    /// - Parameter frame: the buffer to fill (reused frame to frame).
    /// - Returns: false at the end of the input.
    /// - Throws: the source's error, or an `MediaError` (a truncated frame …).
    public mutating func readFrame(into frame: inout [UInt8]) throws -> Bool {
        guard case .frame = try step() else { return false }
        let size = parser.frameBytes
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
        return try parser.endFrame(receivedBytes: filled)
    }

    /// The next frame's I420 bytes in a new array.
    ///
    /// - Returns: the frame, or nil at the end of the input.
    /// - Throws: as ``readFrame(into:)``.
    public mutating func nextFrame() throws -> [UInt8]? {
        var frame: [UInt8] = []
        return try readFrame(into: &frame) ? frame : nil
    }
}
