public import H264

/// Reads y4m (a header line, then `FRAME` lines each followed by a frame's planes) or raw I420
/// (frames back to back), without doing any I/O: the caller hands it the bytes it has and is
/// told what they hold.
///
/// The planes are never copied by the reader: after ``Step/frame(consumed:)`` the next
/// ``frameBytes`` bytes of the input are the frame's, and the caller moves them wherever it wants
/// them (a file reader reads them straight into its frame buffer), then reports how many it got
/// with ``endFrame(receivedBytes:)``. ``Y4MStreamReader`` does this for bytes pushed in chunks.
///
/// ```swift
/// var reader = Y4MReader()
/// while true {
///     switch try reader.step(unread, isComplete: atEnd) {
///     case .needMoreBytes: // read more, call step again
///     case .header(let consumed): // drop `consumed` bytes
///     case .frame(let consumed): // drop `consumed`, take frameBytes, call endFrame
///     case .end: // done
///     }
/// }
/// ```
public struct Y4MReader: Sendable {
    /// What the input is.
    public enum Layout: Hashable, Sendable {
        /// A y4m stream: header line, then `FRAME` lines and planes.
        case y4m
        /// Raw I420 planes of a size and rate given up front, no lines.
        case rawI420
    }

    /// What the bytes given to ``step(_:isComplete:)`` begin with.
    public enum Step: Hashable, Sendable {
        /// Nothing complete yet: call again with more bytes (none were consumed).
        case needMoreBytes
        /// The header line, `consumed` bytes with its `\n`, was read: ``header`` is set.
        case header(consumed: Int)
        /// A frame begins after `consumed` bytes (its `FRAME` line; 0 for raw I420): the next
        /// ``frameBytes`` bytes are its planes. Call ``endFrame(receivedBytes:)`` next.
        case frame(consumed: Int)
        /// The input ended cleanly between frames.
        case end
    }

    /// The input's layout.
    public let layout: Layout
    /// The stream header: nil until ``Step/header(consumed:)`` for y4m; given for raw I420.
    public private(set) var header: Y4MHeader?
    /// How many whole frames were read.
    public private(set) var framesRead = 0
    /// How many bytes of the input were consumed so far (where the next error is, counted from
    /// the start of the stream).
    public private(set) var bytesConsumed = 0
    private var inFrame = false

    /// The longest header line, `\n` included.
    public static let maxHeaderLength = 4096
    /// The longest `FRAME` line, `\n` included.
    public static let maxFrameLineLength = 1024

    /// A reader of a y4m stream: the header first.
    public init() {
        layout = .y4m
    }

    /// A reader of raw I420 frames of the given size and rate (no header, no lines).
    ///
    /// - Parameters:
    ///   - width: the width in luma samples.
    ///   - height: the height in luma samples.
    ///   - frameRate: the frame rate, kept in ``header``.
    public init(rawI420 width: Int, height: Int, frameRate: FrameRate) {
        layout = .rawI420
        header = Y4MHeader(width: width, height: height, frameRate: frameRate, colorspace: "420")
    }

    /// The bytes of one frame's planes: ``Y4MHeader/frameBytes``, 0 before the header.
    public var frameBytes: Int { header?.frameBytes ?? 0 }

    /// Reads what `bytes` begin with: the header, a frame's start, the end, or not enough yet.
    ///
    /// - Parameters:
    ///   - bytes: the unread input (what earlier steps consumed left out).
    ///   - isComplete: true when no bytes will follow `bytes`.
    /// - Throws: the header's errors (``Y4MHeader/parse(_:)``), `H264.MediaError.Code.emptyInput`,
    ///   `H264.MediaError.Code.truncatedHeader`, `H264.MediaError.Code.truncatedFrameHeader` and
    ///   `H264.MediaError.Code.badFrameHeader`, with the byte offset in the stream.
    /// - Precondition: no frame is open (``endFrame(receivedBytes:)`` ended the last one).
    public mutating func step(_ bytes: UnsafeRawBufferPointer, isComplete: Bool) throws(MediaError) -> Step {
        precondition(!inFrame, "Y4MReader.step called before endFrame(receivedBytes:)")
        guard header != nil else {
            guard let end = lineEnd(bytes, limit: Self.maxHeaderLength) else {
                if bytes.count >= Self.maxHeaderLength || (isComplete && !bytes.isEmpty) {
                    throw MediaError(.truncatedHeader, field: "YUV4MPEG2", byteOffset: bytesConsumed, "truncated y4m header (no end of line)")
                }
                if isComplete { throw MediaError(.emptyInput, byteOffset: 0, "empty input: no y4m header") }
                return .needMoreBytes
            }
            do {
                self.header = try Y4MHeader.parse(bytes[..<end])
            } catch {
                throw error.offset(by: 0) // the header line starts the stream
            }
            bytesConsumed += end + 1
            return .header(consumed: end + 1)
        }
        if layout == .rawI420 {
            if isComplete && bytes.isEmpty { return .end }
            inFrame = true
            return .frame(consumed: 0)
        }
        if bytes.isEmpty { return isComplete ? .end : .needMoreBytes }
        guard let end = lineEnd(bytes, limit: Self.maxFrameLineLength) else {
            if bytes.count >= Self.maxFrameLineLength || isComplete {
                throw MediaError(.truncatedFrameHeader, field: "FRAME", byteOffset: bytesConsumed,
                                "truncated y4m: frame \(framesRead + 1) has an incomplete FRAME line")
            }
            return .needMoreBytes
        }
        let line = bytes[..<end]
        guard line.starts(with: "FRAME".utf8), line.count == 5 || line[5] == 0x20 else {
            throw MediaError(.badFrameHeader, field: "FRAME", byteOffset: bytesConsumed,
                            "malformed y4m: frame \(framesRead + 1) does not start with FRAME")
        }
        bytesConsumed += end + 1
        inFrame = true
        return .frame(consumed: end + 1)
    }

    /// Ends the frame begun by ``Step/frame(consumed:)``.
    ///
    /// - Parameter receivedBytes: how many of its ``frameBytes`` the input held (fewer only
    ///   when the input ended).
    /// - Returns: true for a whole frame; false when raw I420 input ended cleanly (no bytes).
    /// - Throws: `H264.MediaError.Code.truncatedFrame` when the input ended inside the frame.
    /// - Precondition: ``step(_:isComplete:)`` returned ``Step/frame(consumed:)``.
    public mutating func endFrame(receivedBytes: Int) throws(MediaError) -> Bool {
        precondition(inFrame, "Y4MReader.endFrame(receivedBytes:) without a frame")
        inFrame = false
        if layout == .rawI420 && receivedBytes == 0 { return false }
        guard receivedBytes == frameBytes else {
            throw MediaError(.truncatedFrame, byteOffset: bytesConsumed + receivedBytes,
                            "truncated input: frame \(framesRead + 1) has \(receivedBytes) of \(frameBytes) bytes")
        }
        bytesConsumed += receivedBytes
        framesRead += 1
        return true
    }

    /// The index of the first `\n` within `limit` bytes.
    private func lineEnd(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Int? {
        bytes.prefix(limit).firstIndex(of: 0x0A)
    }
}
