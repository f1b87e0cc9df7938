/// One RTMP message (RTMP specification clause 5.3.1 / 6.1): its type, timestamp, message
/// stream id and payload, as the chunk stream carries it (``RTMPChunkReader``,
/// ``RTMPChunkWriter``).
public struct RTMPMessage: Hashable, Sendable {
    /// The message type id (clause 5.4, 6.2, 7.1).
    public struct MessageType: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        /// The type id.
        public var rawValue: UInt8
        /// A type of id `rawValue`.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 1: Set Chunk Size (protocol control).
        public static let setChunkSize = MessageType(rawValue: 1)
        /// 2: Abort Message (protocol control).
        public static let abort = MessageType(rawValue: 2)
        /// 3: Acknowledgement (protocol control).
        public static let acknowledgement = MessageType(rawValue: 3)
        /// 4: User Control Message.
        public static let userControl = MessageType(rawValue: 4)
        /// 5: Window Acknowledgement Size (protocol control).
        public static let windowAcknowledgementSize = MessageType(rawValue: 5)
        /// 6: Set Peer Bandwidth (protocol control).
        public static let setPeerBandwidth = MessageType(rawValue: 6)
        /// 8: audio data (an FLV audio tag body).
        public static let audio = MessageType(rawValue: 8)
        /// 9: video data (an FLV video tag body, `FLVVideoTag`).
        public static let video = MessageType(rawValue: 9)
        /// 18: AMF0 data (`@setDataFrame`, `onMetaData`).
        public static let dataAMF0 = MessageType(rawValue: 18)
        /// 20: AMF0 command (``RTMPCommand``).
        public static let commandAMF0 = MessageType(rawValue: 20)

        /// The type's name, or its id.
        public var description: String {
            switch rawValue {
            case 1: "Set Chunk Size"
            case 2: "Abort"
            case 3: "Acknowledgement"
            case 4: "User Control"
            case 5: "Window Acknowledgement Size"
            case 6: "Set Peer Bandwidth"
            case 8: "Audio"
            case 9: "Video"
            case 18: "Data (AMF0)"
            case 20: "Command (AMF0)"
            default: "type \(rawValue)"
            }
        }
    }

    /// The message type.
    public var type: MessageType
    /// The timestamp in milliseconds (for video, the decoding time), modulo 2^32.
    public var timestamp: UInt32
    /// The message stream id (0 for protocol control and `connect`; the id `createStream`
    /// returned for a stream's messages).
    public var messageStreamId: UInt32
    /// The payload.
    public var payload: [UInt8]

    /// A message of `type`.
    public init(type: MessageType, timestamp: UInt32 = 0, messageStreamId: UInt32 = 0, payload: [UInt8]) {
        self.type = type
        self.timestamp = timestamp
        self.messageStreamId = messageStreamId
        self.payload = payload
    }
}
