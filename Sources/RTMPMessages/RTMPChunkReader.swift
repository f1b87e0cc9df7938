public import MediaCore
/// Reassembles RTMP messages from a connection's chunk stream (RTMP specification clause 5.3),
/// sans I/O: append the bytes as they come, then take messages until it answers nil ("need more
/// bytes" is not an error).
///
/// ```swift
/// reader.append(bytesFromSocket)
/// while let message = try reader.nextMessage() {
///     if let number = reader.acknowledgementDue() { send(.acknowledgement(sequenceNumber: number)) }
///     handle(message)
/// }
/// ```
///
/// The reader keeps each chunk stream's header state (types 0–3, extended timestamps on type
/// 3 chunks after a type 0/1/2 that had one) and applies what concerns the chunk stream itself
/// as the messages come out: `Set Chunk Size` (1…2^31 − 1; 0 and larger values are fatal),
/// `Abort` (the partial message is dropped) and `Window Acknowledgement Size` (its window is
/// kept for ``acknowledgementDue()``); every message is still returned.
///
/// Bounds: a message longer than ``maximumMessageLength`` is refused when its header is read,
/// before anything is allocated for it; at most ``maximumPartialMessages`` chunk streams may
/// hold a partial message at a time, and their bytes together may not pass
/// ``maximumMessageLength`` (a peer that starts 64 long messages and finishes none holds one
/// message's worth, not 64); payloads grow only as their bytes arrive. Every error is fatal:
/// the connection's framing is lost.
public struct RTMPChunkReader: Sendable {
    /// The chunk size before any `Set Chunk Size` (clause 5.4.1).
    public static let defaultChunkSize = 128
    /// The largest message length read by default (8 MiB: a 4K IDR picture fits).
    public static let defaultMaximumMessageLength = 8 << 20
    /// How many chunk streams may hold a partial message at once.
    public static let maximumPartialMessages = 64

    /// What a chunk stream remembers of its last header (clause 5.3.1.2).
    private struct ChunkStream: Sendable {
        var timestamp: UInt32 = 0
        /// The timestamp delta of type 1/2 headers, or the timestamp of a type 0 (clause
        /// 5.3.1.2.4: a type 3 after a type 0 adds that).
        var delta: UInt32 = 0
        var length = 0
        var type = RTMPMessage.MessageType(rawValue: 0)
        var messageStreamId: UInt32 = 0
        var extendedTimestamp = false
        var hasHeader = false
        /// The message being reassembled; nil between messages.
        var partial: [UInt8]?
    }

    /// The longest message accepted.
    public let maximumMessageLength: Int
    /// The peer's chunk size (its last `Set Chunk Size`).
    public private(set) var chunkSize = RTMPChunkReader.defaultChunkSize
    /// The bytes appended so far (what `Acknowledgement` counts).
    public private(set) var bytesReceived: UInt64 = 0
    /// The peer's `Window Acknowledgement Size`; nil until it sends one.
    public private(set) var windowAcknowledgementSize: UInt32?
    private var lastAcknowledged: UInt64 = 0
    private var buffer: [UInt8] = []
    private var position = 0
    private var streams: [UInt32: ChunkStream] = [:]
    private var partialCount = 0
    /// The bytes held in partial messages, all chunk streams together.
    private var partialBytes = 0

    /// A reader refusing messages longer than `maximumMessageLength` bytes.
    public init(maximumMessageLength: Int = RTMPChunkReader.defaultMaximumMessageLength) {
        self.maximumMessageLength = maximumMessageLength
    }

    /// Adds bytes read from the connection.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if position > 0 && position >= buffer.count / 2 {
            buffer.removeSubrange(0..<position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
        bytesReceived += UInt64(bytes.count)
    }

    /// The bytes appended and not yet read as chunks.
    public var bufferedByteCount: Int { buffer.count - position }

    /// The sequence number to acknowledge when the bytes received since the last
    /// acknowledgement reach the peer's window (clause 5.4.3); nil otherwise. Each call that
    /// answers a number counts it as sent.
    public mutating func acknowledgementDue() -> UInt32? {
        guard let window = windowAcknowledgementSize, window > 0, bytesReceived - lastAcknowledged >= UInt64(window) else { return nil }
        lastAcknowledged = bytesReceived
        return UInt32(truncatingIfNeeded: bytesReceived)
    }

    /// The next complete message; nil until its last chunk has come.
    ///
    /// - Throws: `MediaError.Code.invalidRTMPChunk`, `MediaError.Code.rtmpMessageTooLarge`,
    ///   `MediaError.Code.rtmpChunkSizeOutOfRange` and the errors of
    ///   ``RTMPControlMessage/init(_:)`` for control messages: all fatal.
    public mutating func nextMessage() throws(MediaError) -> RTMPMessage? {
        while let message = try readChunk() {
            if let message {
                try apply(message)
                return message
            }
        }
        return nil
    }

    /// Applies the control messages that change how chunks are read.
    private mutating func apply(_ message: RTMPMessage) throws(MediaError) {
        switch message.type {
        case .setChunkSize, .abort, .windowAcknowledgementSize:
            switch try RTMPControlMessage(message) {
            case .setChunkSize(let size)?: chunkSize = Int(size)
            case .abort(let id)?:
                if let partial = streams[id]?.partial {
                    streams[id]?.partial = nil
                    partialCount -= 1
                    partialBytes -= partial.count
                }
            case .windowAcknowledgementSize(let size)?: windowAcknowledgementSize = size
            default: break
            }
        default: break
        }
    }

    /// Reads one chunk: nil when its bytes have not all come (nothing consumed), `.some(nil)`
    /// when it was read and its message is not complete, `.some(message)` when it completed one.
    private mutating func readChunk() throws(MediaError) -> RTMPMessage?? {
        let start = position
        var index = position
        let end = buffer.count
        func take(_ count: Int) -> Int? {
            guard end - index >= count else { return nil }
            var value = 0
            for offset in 0..<count { value = value << 8 | Int(buffer[index + offset]) }
            index += count
            return value
        }
        guard let first = take(1) else { return nil }
        let format = first >> 6
        var id = UInt32(first & 0x3F)
        if id == 0 {
            guard let byte = take(1) else { return nil }
            id = UInt32(byte) + 64
        } else if id == 1 {
            guard let low = take(1), let high = take(1) else { return nil }
            id = UInt32(high << 8 | low) + 64
        }
        var stream = streams[id] ?? ChunkStream()
        let startsMessage = stream.partial == nil
        guard format == 0 || stream.hasHeader else {
            throw MediaError(.invalidRTMPChunk, field: "fmt", byteOffset: start,
                            "a type \(format) chunk on chunk stream \(id), which has had no type 0 chunk")
        }
        var timestampField: Int?
        if format <= 2 {
            guard let field = take(3) else { return nil }
            timestampField = field
            if format <= 1 {
                guard let length = take(3), let type = take(1) else { return nil }
                if !startsMessage && length != stream.length {
                    throw MediaError(.invalidRTMPChunk, field: "message length", byteOffset: start,
                                    "chunk stream \(id) changed its message length from \(stream.length) to \(length) inside a message")
                }
                stream.length = length
                stream.type = RTMPMessage.MessageType(rawValue: UInt8(type))
                if format == 0 {
                    guard end - index >= 4 else { return nil }
                    // Message stream id: 32 bits, little-endian (clause 5.3.1.2.1).
                    stream.messageStreamId = UInt32(buffer[index]) | UInt32(buffer[index + 1]) << 8
                        | UInt32(buffer[index + 2]) << 16 | UInt32(buffer[index + 3]) << 24
                    index += 4
                }
            }
            stream.extendedTimestamp = field == 0xFF_FFFF
        }
        var timestamp = timestampField.map { UInt32($0) }
        if stream.extendedTimestamp {
            guard let extended = take(4) else { return nil }
            timestamp = UInt32(extended)
        }
        guard stream.length <= maximumMessageLength else {
            throw MediaError(.rtmpMessageTooLarge, field: "message length", byteOffset: start,
                            "a message of \(stream.length) bytes; the bound is \(maximumMessageLength)")
        }
        let received = stream.partial?.count ?? 0
        let count = min(chunkSize, stream.length - received)
        guard end - index >= count else { return nil }
        // The whole chunk is here: commit its header.
        if startsMessage {
            if format == 0 {
                stream.timestamp = timestamp ?? 0
                stream.delta = stream.timestamp
            } else {
                if let timestamp { stream.delta = timestamp }
                stream.timestamp &+= stream.delta
            }
            guard partialCount < Self.maximumPartialMessages || stream.length <= count else {
                throw MediaError(.invalidRTMPChunk, field: "chunk stream id", byteOffset: start,
                                "more than \(Self.maximumPartialMessages) chunk streams with a partial message")
            }
        } else if format != 3 {
            // A type 0/1/2 header inside a message (allowed by nobody's writer but tolerated by
            // FFmpeg): its timestamp replaces the message's.
            if format == 0 { stream.timestamp = timestamp ?? 0 } else if let timestamp { stream.delta = timestamp }
        }
        stream.hasHeader = true
        let completes = received + count == stream.length
        guard completes || partialBytes + count <= maximumMessageLength else {
            throw MediaError(.rtmpMessageTooLarge, field: "partial messages", byteOffset: start,
                            "\(partialBytes + count) bytes of unfinished messages; the bound is \(maximumMessageLength)")
        }
        var payload = stream.partial ?? []
        if startsMessage && !completes {
            partialCount += 1
            payload.reserveCapacity(min(stream.length, 1 << 16))
        }
        payload.append(contentsOf: buffer[index..<index + count])
        index += count
        position = index
        if completes {
            if !startsMessage { partialCount -= 1 }
            partialBytes -= received
            stream.partial = nil
            streams[id] = stream
            return .some(RTMPMessage(type: stream.type, timestamp: stream.timestamp, messageStreamId: stream.messageStreamId,
                                     payload: payload))
        }
        partialBytes += count
        stream.partial = payload
        streams[id] = stream
        return .some(nil)
    }
}
