public import H264

/// A y4m reader for bytes that arrive in chunks of any size: append them, take whole frames.
///
/// The same frames and the same errors come out whatever sizes the chunks have. Each frame is a
/// new array; a reader of files that reuses its frame buffers drives ``Y4MReader`` directly.
///
/// ```swift
/// var reader = Y4MStreamReader()
/// reader.append(chunk)
/// while let frame = try reader.nextFrame() { … }
/// reader.finish()                                  // at the end of the input
/// while let frame = try reader.nextFrame() { … }   // throws if the input ended inside one
/// ```
public struct Y4MStreamReader: Sendable {
    private var reader: Y4MReader
    private var buffer: [UInt8] = []
    private var start = 0
    private var isComplete = false
    /// Between a `FRAME` line and the end of its planes.
    private var inFrame = false

    /// A reader of a y4m stream, or of what `reader` reads (e.g. raw I420).
    ///
    /// - Parameter reader: the parser, in its initial state.
    public init(_ reader: Y4MReader = Y4MReader()) {
        self.reader = reader
    }

    /// The stream header, once read.
    public var header: Y4MHeader? { reader.header }
    /// How many whole frames were taken.
    public var framesRead: Int { reader.framesRead }

    /// Appends the next bytes of the input.
    ///
    /// - Parameter bytes: the bytes, in stream order.
    /// - Precondition: ``finish()`` was not called.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        precondition(!isComplete, "Y4MStreamReader.append after finish()")
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Says that no more bytes will come: ``nextFrame()`` then returns the last frames and
    /// throws if the input ended inside one.
    public mutating func finish() {
        isComplete = true
    }

    /// The next whole frame's planes; nil when more bytes are needed, or after ``finish()``,
    /// at the end.
    ///
    /// - Throws: the errors of ``Y4MReader/step(_:isComplete:)`` and
    ///   ``Y4MReader/endFrame(receivedBytes:)``; after an error the reader is not to be used again.
    public mutating func nextFrame() throws(MediaError) -> [UInt8]? {
        while !inFrame {
            let step = try buffer.withUnsafeBytes { bytes in
                Result { () throws(MediaError) in
                    try reader.step(UnsafeRawBufferPointer(rebasing: bytes[start...]), isComplete: isComplete)
                }
            }.get()
            switch step {
            case .needMoreBytes, .end:
                return nil
            case .header(let consumed):
                start += consumed
            case .frame(let consumed):
                start += consumed
                inFrame = true
            }
        }
        let size = reader.frameBytes
        guard buffer.count - start >= size || isComplete else { return nil }
        let received = min(size, buffer.count - start)
        inFrame = false
        guard try reader.endFrame(receivedBytes: received) else { return nil }
        start += received
        return Array(buffer[(start - received)..<start])
    }

    /// The frames of a whole y4m stream and its header.
    ///
    /// - Parameter bytes: the stream.
    /// - Throws: the errors of ``nextFrame()``.
    public static func frames(in bytes: some Sequence<UInt8>) throws(MediaError) -> (header: Y4MHeader, frames: [[UInt8]]) {
        var reader = Y4MStreamReader()
        reader.append(bytes)
        reader.finish()
        var frames: [[UInt8]] = []
        while let frame = try reader.nextFrame() { frames.append(frame) }
        guard let header = reader.header else { throw MediaError(.emptyInput, byteOffset: 0, "empty input: no y4m header") }
        return (header, frames)
    }
}
