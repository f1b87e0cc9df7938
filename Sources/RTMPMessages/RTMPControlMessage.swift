public import MediaCore
/// The protocol control messages (RTMP specification clause 5.4, types 1, 2, 3, 5, 6) and the
/// user control message (clause 6.2, type 4), typed.
public enum RTMPControlMessage: Hashable, Sendable {
    /// Set Chunk Size (1): the sender's chunks are this long from now on (1…2^31 − 1).
    case setChunkSize(UInt32)
    /// Abort Message (2): drop the partial message of this chunk stream.
    case abort(chunkStreamId: UInt32)
    /// Acknowledgement (3): the bytes the sender has received so far (its sequence number).
    case acknowledgement(sequenceNumber: UInt32)
    /// User Control Message (4).
    case userControl(RTMPUserControlEvent)
    /// Window Acknowledgement Size (5): acknowledge after this many bytes.
    case windowAcknowledgementSize(UInt32)
    /// Set Peer Bandwidth (6): the window the receiver should use, and how (0 hard, 1 soft,
    /// 2 dynamic).
    case setPeerBandwidth(UInt32, limitType: UInt8)

    /// The chunk stream id that carries protocol control and user control messages (clause
    /// 5.4: 2).
    public static let chunkStreamId = 2

    /// Reads a control message; nil when `message` is not of types 1–6.
    ///
    /// - Throws: `MediaError.Code.invalidRTMPMessage` when the payload is shorter than the type
    ///   needs (field named), `MediaError.Code.rtmpChunkSizeOutOfRange` for a chunk size of 0
    ///   or with the top bit set.
    public init?(_ message: RTMPMessage) throws(MediaError) {
        let payload = message.payload
        func uint32(_ field: String, at offset: Int = 0) throws(MediaError) -> UInt32 {
            guard payload.count >= offset + 4 else {
                throw MediaError(.invalidRTMPMessage, field: field, byteOffset: offset,
                                "\(message.type) needs \(offset + 4) bytes, has \(payload.count)")
            }
            return UInt32(BigEndian.read(payload, at: offset, count: 4))
        }
        switch message.type {
        case .setChunkSize:
            let size = try uint32("chunk size")
            guard size >= 1, size <= 0x7FFF_FFFF else {
                throw MediaError(.rtmpChunkSizeOutOfRange, field: "chunk size", byteOffset: 0,
                                "Set Chunk Size \(size) is not 1…2147483647")
            }
            self = .setChunkSize(size)
        case .abort: self = .abort(chunkStreamId: try uint32("chunk stream id"))
        case .acknowledgement: self = .acknowledgement(sequenceNumber: try uint32("sequence number"))
        case .userControl: self = .userControl(try RTMPUserControlEvent(payload))
        case .windowAcknowledgementSize: self = .windowAcknowledgementSize(try uint32("acknowledgement window size"))
        case .setPeerBandwidth:
            let size = try uint32("acknowledgement window size")
            guard payload.count >= 5 else {
                throw MediaError(.invalidRTMPMessage, field: "limit type", byteOffset: 4, "Set Peer Bandwidth needs 5 bytes")
            }
            self = .setPeerBandwidth(size, limitType: payload[4])
        default: return nil
        }
    }

    /// The message (on message stream 0, timestamp 0).
    public var message: RTMPMessage {
        var payload: [UInt8] = []
        let type: RTMPMessage.MessageType
        switch self {
        case .setChunkSize(let size): type = .setChunkSize; BigEndian.append(Int(size), count: 4, to: &payload)
        case .abort(let id): type = .abort; BigEndian.append(Int(id), count: 4, to: &payload)
        case .acknowledgement(let number): type = .acknowledgement; BigEndian.append(Int(number), count: 4, to: &payload)
        case .userControl(let event): type = .userControl; payload = event.serialized()
        case .windowAcknowledgementSize(let size): type = .windowAcknowledgementSize; BigEndian.append(Int(size), count: 4, to: &payload)
        case .setPeerBandwidth(let size, let limit):
            type = .setPeerBandwidth
            BigEndian.append(Int(size), count: 4, to: &payload)
            payload.append(limit)
        }
        return RTMPMessage(type: type, payload: payload)
    }
}

/// A user control event (RTMP specification clause 7.1.7): a 16-bit event type, then its data.
public enum RTMPUserControlEvent: Hashable, Sendable {
    /// Stream Begin (0): the stream with this id is ready.
    case streamBegin(messageStreamId: UInt32)
    /// Stream EOF (1).
    case streamEOF(messageStreamId: UInt32)
    /// Stream Dry (2).
    case streamDry(messageStreamId: UInt32)
    /// Set Buffer Length (3): the client's buffer for a stream, in milliseconds.
    case setBufferLength(messageStreamId: UInt32, milliseconds: UInt32)
    /// Stream Is Recorded (4).
    case streamIsRecorded(messageStreamId: UInt32)
    /// Ping Request (6): answer with a ping response carrying the same timestamp.
    case pingRequest(timestamp: UInt32)
    /// Ping Response (7).
    case pingResponse(timestamp: UInt32)
    /// Any other event type, with its data.
    case other(eventType: UInt16, data: [UInt8])

    /// Reads an event from a user control message's payload.
    ///
    /// - Throws: `MediaError.Code.invalidRTMPMessage` when the payload is shorter than the
    ///   event needs.
    public init(_ payload: [UInt8]) throws(MediaError) {
        func uint32(at offset: Int) throws(MediaError) -> UInt32 {
            guard payload.count >= offset + 4 else {
                throw MediaError(.invalidRTMPMessage, field: "event data", byteOffset: offset, "the user control event is truncated")
            }
            return UInt32(BigEndian.read(payload, at: offset, count: 4))
        }
        guard payload.count >= 2 else {
            throw MediaError(.invalidRTMPMessage, field: "event type", byteOffset: 0, "a user control message without its event type")
        }
        let eventType = UInt16(BigEndian.read(payload, at: 0, count: 2))
        switch eventType {
        case 0: self = .streamBegin(messageStreamId: try uint32(at: 2))
        case 1: self = .streamEOF(messageStreamId: try uint32(at: 2))
        case 2: self = .streamDry(messageStreamId: try uint32(at: 2))
        case 3: self = .setBufferLength(messageStreamId: try uint32(at: 2), milliseconds: try uint32(at: 6))
        case 4: self = .streamIsRecorded(messageStreamId: try uint32(at: 2))
        case 6: self = .pingRequest(timestamp: try uint32(at: 2))
        case 7: self = .pingResponse(timestamp: try uint32(at: 2))
        default: self = .other(eventType: eventType, data: Array(payload.dropFirst(2)))
        }
    }

    /// The event type and data.
    public func serialized() -> [UInt8] {
        var output: [UInt8] = []
        func put(_ type: Int, _ values: UInt32...) {
            BigEndian.append(type, count: 2, to: &output)
            for value in values { BigEndian.append(Int(value), count: 4, to: &output) }
        }
        switch self {
        case .streamBegin(let id): put(0, id)
        case .streamEOF(let id): put(1, id)
        case .streamDry(let id): put(2, id)
        case .setBufferLength(let id, let milliseconds): put(3, id, milliseconds)
        case .streamIsRecorded(let id): put(4, id)
        case .pingRequest(let timestamp): put(6, timestamp)
        case .pingResponse(let timestamp): put(7, timestamp)
        case .other(let eventType, let data):
            put(Int(eventType))
            output.append(contentsOf: data)
        }
        return output
    }
}
