public import MediaCore
/// Splits RTMP messages into chunks (RTMP specification clause 5.3), sans I/O: the first chunk
/// of a message gets the smallest header that its chunk stream's previous message allows —
/// type 1 when only the message stream id is the same, type 2 when the length and type are too,
/// type 3 when the timestamp delta is also the previous one — and the rest type 3 headers;
/// timestamps (or deltas) of 0xFFFFFF and above go in the extended timestamp field, repeated in
/// every type 3 chunk of the message as FFmpeg and nginx-rtmp read it.
///
/// ```swift
/// var writer = RTMPChunkWriter()
/// var bytes: [UInt8] = []
/// try writer.setChunkSize(4096, appendingTo: &bytes)    // Set Chunk Size, then the new size
/// try writer.append(message, chunkStreamId: 6, to: &bytes)
/// ```
public struct RTMPChunkWriter: Sendable {
    /// The largest chunk size this writer sends.
    public static let maximumChunkSize = 65_536

    private struct Previous: Sendable {
        var timestamp: UInt32
        var delta: UInt32?
        var length: Int
        var type: RTMPMessage.MessageType
        var messageStreamId: UInt32
    }

    /// The size of the chunks written (128 until ``setChunkSize(_:appendingTo:)``).
    public private(set) var chunkSize = RTMPChunkReader.defaultChunkSize
    private var previous: [Int: Previous] = [:]

    /// A writer at the default chunk size, 128.
    public init() {}

    /// Appends a `Set Chunk Size` message (at the old size) and writes at `size` from then on.
    ///
    /// - Throws: `MediaError.Code.rtmpChunkSizeOutOfRange` for a size outside 1…65,536.
    public mutating func setChunkSize(_ size: Int, appendingTo output: inout [UInt8]) throws(MediaError) {
        guard (1...Self.maximumChunkSize).contains(size) else {
            throw MediaError(.rtmpChunkSizeOutOfRange, field: "chunk size", "chunk size \(size) is not 1…\(Self.maximumChunkSize)")
        }
        try append(RTMPControlMessage.setChunkSize(UInt32(size)).message, chunkStreamId: RTMPControlMessage.chunkStreamId, to: &output)
        chunkSize = size
    }

    /// Forgets the chunk stream's previous header, so that its next message starts with a type
    /// 0 chunk (after an `Abort`, or for a peer that does not keep state across messages).
    public mutating func reset(chunkStreamId: Int) { previous[chunkStreamId] = nil }

    /// Appends `message` in chunks of ``chunkSize`` on chunk stream `chunkStreamId`.
    ///
    /// - Parameters:
    ///   - message: the message (its payload at most 16,777,215 bytes: the length field's 24 bits).
    ///   - chunkStreamId: 2…65,599 (2 is for control messages; 3 and up for the rest).
    ///   - output: where the chunks go.
    /// - Throws: `MediaError.Code.rtmpMessageTooLarge` for a payload over 16,777,215 bytes,
    ///   `MediaError.Code.valueOutOfRange` for a chunk stream id outside 2…65,599; nothing is
    ///   written then.
    public mutating func append(_ message: RTMPMessage, chunkStreamId: Int, to output: inout [UInt8]) throws(MediaError) {
        guard message.payload.count <= 0xFF_FFFF else {
            throw MediaError(.rtmpMessageTooLarge, field: "message length", "\(message.payload.count) bytes do not fit 24 bits")
        }
        guard (2...65_599).contains(chunkStreamId) else {
            throw MediaError(.valueOutOfRange, field: "chunk stream id", "chunk stream id \(chunkStreamId) is not 2…65599")
        }
        let length = message.payload.count
        var format = 0
        var field = message.timestamp
        var delta: UInt32?
        if let last = previous[chunkStreamId], last.messageStreamId == message.messageStreamId, message.timestamp >= last.timestamp {
            let difference = message.timestamp - last.timestamp
            delta = difference
            field = difference
            if last.length != length || last.type != message.type {
                format = 1
            } else if last.delta != difference {
                format = 2
            } else {
                format = 3
            }
        }
        previous[chunkStreamId] = Previous(timestamp: message.timestamp, delta: delta, length: length, type: message.type,
                                           messageStreamId: message.messageStreamId)
        let extended = field >= 0xFF_FFFF
        output.reserveCapacity(output.count + length + 18 + (length / chunkSize) * 8)
        appendBasicHeader(format: format, chunkStreamId: chunkStreamId, to: &output)
        if format <= 2 {
            BigEndian.append(extended ? 0xFF_FFFF : Int(field), count: 3, to: &output)
            if format <= 1 {
                BigEndian.append(length, count: 3, to: &output)
                output.append(message.type.rawValue)
                if format == 0 {
                    let id = message.messageStreamId
                    output.append(contentsOf: [UInt8(truncatingIfNeeded: id), UInt8(truncatingIfNeeded: id >> 8),
                                               UInt8(truncatingIfNeeded: id >> 16), UInt8(truncatingIfNeeded: id >> 24)])
                }
            }
        }
        if extended { BigEndian.append(Int(field), count: 4, to: &output) }
        var offset = 0
        repeat {
            if offset > 0 {
                appendBasicHeader(format: 3, chunkStreamId: chunkStreamId, to: &output)
                if extended { BigEndian.append(Int(field), count: 4, to: &output) }
            }
            let count = min(chunkSize, length - offset)
            output.append(contentsOf: message.payload[offset..<offset + count])
            offset += count
        } while offset < length
    }

    /// The basic header: fmt and a chunk stream id in 1, 2 or 3 bytes (clause 5.3.1.1).
    private func appendBasicHeader(format: Int, chunkStreamId id: Int, to output: inout [UInt8]) {
        let fmt = UInt8(format << 6)
        if id < 64 {
            output.append(fmt | UInt8(id))
        } else if id < 320 {
            output.append(contentsOf: [fmt, UInt8(id - 64)])
        } else {
            output.append(contentsOf: [fmt | 1, UInt8((id - 64) & 0xFF), UInt8((id - 64) >> 8)])
        }
    }
}
