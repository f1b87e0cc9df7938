public import MediaCore
public import MediaContainers
/// An AMF0 command message (RTMP specification clause 7.1.1, type 20): the command's name,
/// its transaction id, a command object (or null) and its arguments — what `connect`,
/// `createStream`, `publish`, `play` and the server's `_result`, `_error` and `onStatus` are.
///
/// The factories write the commands of a publish (clause 7.2.1.1, 7.2.2.6, and FFmpeg's and
/// OBS's `releaseStream`/`FCPublish`/`FCUnpublish`) and of a play (7.2.2.1) as servers expect
/// them.
public struct RTMPCommand: Hashable, Sendable {
    /// The command name (`connect`, `_result`, `onStatus` …).
    public var name: String
    /// The transaction id: 1 for `connect`, the request's for its `_result`/`_error`, 0 for
    /// `onStatus` and commands that want no answer.
    public var transactionId: Double
    /// The command object (`connect`'s properties, `_result`'s server properties), or null.
    public var commandObject: AMF0Value
    /// The values after the command object.
    public var arguments: [AMF0Value]

    /// A command.
    public init(name: String, transactionId: Double, commandObject: AMF0Value = .null, arguments: [AMF0Value] = []) {
        self.name = name
        self.transactionId = transactionId
        self.commandObject = commandObject
        self.arguments = arguments
    }

    /// Reads a command message's payload.
    ///
    /// - Throws: the errors of `AMF0Reader`; `MediaError.Code.invalidRTMPMessage` when the
    ///   payload does not start with a string name, or its transaction id is not a number. A
    ///   command of its name alone gets transaction 0, one without a command object null.
    public init(parsing payload: some Collection<UInt8>) throws(MediaError) {
        var reader = AMF0Reader(payload)
        let values = try reader.readAll()
        guard case .string(let name)? = values.first else {
            throw MediaError(.invalidRTMPMessage, field: "command name", byteOffset: 0, "a command message must start with its name")
        }
        // FFmpeg's listening server sends `onFCPublish` with its name alone: tolerated as
        // transaction 0. A transaction id of another type is an error.
        var transactionId = 0.0
        if values.count >= 2 {
            guard case .number(let number) = values[1] else {
                throw MediaError(.invalidRTMPMessage, field: "transaction id", "\(name)'s transaction id is not a number")
            }
            transactionId = number
        }
        self.init(name: name, transactionId: transactionId, commandObject: values.count > 2 ? values[2] : .null,
                  arguments: Array(values.dropFirst(3)))
    }

    /// The AMF0 payload.
    public func serialized() -> [UInt8] {
        AMF0Value.serialized([.string(name), .number(transactionId), commandObject] + arguments)
    }

    /// The command as a message on `messageStreamId` (0 for `connect`, `createStream` and
    /// the NetConnection commands; the stream's id for `publish`, `play`).
    public func message(messageStreamId: UInt32 = 0) -> RTMPMessage {
        RTMPMessage(type: .commandAMF0, messageStreamId: messageStreamId, payload: serialized())
    }

    /// The `code` of the information object (the first argument) of `onStatus`, `_result` or
    /// `_error` (`NetStream.Publish.Start`, `NetConnection.Connect.Rejected` …); nil without one.
    public var statusCode: String? { arguments.first?["code"]?.string }

    /// The `description` of the information object, if any.
    public var statusDescription: String? { arguments.first?["description"]?.string }

    /// `connect` (clause 7.2.1.1), transaction 1: `app`, `type` "nonprivate", `flashVer` and
    /// `tcUrl` — what nginx-rtmp, SRS and the services read.
    ///
    /// - Parameters:
    ///   - app: the application (`live` in `rtmp://host/live/key`).
    ///   - tcUrl: the URL up to the application (`rtmp://host/live`).
    ///   - flashVer: the client's version string (FFmpeg sends `FMLE/3.0 (compatible; Lavf…)`).
    ///   - fourCcList: the Enhanced RTMP codecs the client supports (`avc1`, `hvc1`), as the
    ///     strict array `fourCcList`; nil leaves it out (what legacy clients send).
    public static func connect(app: String, tcUrl: String, flashVer: String = "FMLE/3.0 (compatible; swift-h264)",
                               fourCcList: [String]? = nil) -> RTMPCommand {
        var properties = [
            AMF0Property("app", .string(app)), AMF0Property("type", .string("nonprivate")),
            AMF0Property("flashVer", .string(flashVer)), AMF0Property("tcUrl", .string(tcUrl)),
        ]
        if let fourCcList { properties.append(AMF0Property("fourCcList", .strictArray(fourCcList.map(AMF0Value.string)))) }
        return RTMPCommand(name: "connect", transactionId: 1, commandObject: .object(properties))
    }

    /// `releaseStream` (stream key), as FFmpeg and OBS send it before publishing.
    public static func releaseStream(_ streamKey: String, transactionId: Double) -> RTMPCommand {
        RTMPCommand(name: "releaseStream", transactionId: transactionId, arguments: [.string(streamKey)])
    }

    /// `FCPublish` (stream key): the services' (and nginx-rtmp's) announcement of a publish.
    public static func fcPublish(_ streamKey: String, transactionId: Double) -> RTMPCommand {
        RTMPCommand(name: "FCPublish", transactionId: transactionId, arguments: [.string(streamKey)])
    }

    /// `FCUnpublish` (stream key), before `deleteStream` at the end of a publish.
    public static func fcUnpublish(_ streamKey: String, transactionId: Double) -> RTMPCommand {
        RTMPCommand(name: "FCUnpublish", transactionId: transactionId, arguments: [.string(streamKey)])
    }

    /// `createStream` (clause 7.2.1.3): its `_result` carries the message stream id.
    public static func createStream(transactionId: Double) -> RTMPCommand {
        RTMPCommand(name: "createStream", transactionId: transactionId)
    }

    /// `deleteStream` (clause 7.2.2.3) of `messageStreamId`.
    public static func deleteStream(_ messageStreamId: UInt32, transactionId: Double) -> RTMPCommand {
        RTMPCommand(name: "deleteStream", transactionId: transactionId, arguments: [.number(Double(messageStreamId))])
    }

    /// `publish` (clause 7.2.2.6) of the stream key, type `live`; answered by `onStatus`
    /// `NetStream.Publish.Start`.
    public static func publish(_ streamKey: String, type: String = "live") -> RTMPCommand {
        RTMPCommand(name: "publish", transactionId: 0, arguments: [.string(streamKey), .string(type)])
    }

    /// `play` (clause 7.2.2.1) of the stream key from its start (−2: live, else recorded).
    public static func play(_ streamKey: String) -> RTMPCommand {
        RTMPCommand(name: "play", transactionId: 0, arguments: [.string(streamKey), .number(-2)])
    }

    /// The `@setDataFrame` data message (type 18) carrying `onMetaData` with `metadata`
    /// (`FLVMetadata`'s script data), as encoders send it after `publish`.
    public static func setDataFrame(_ metadata: FLVMetadata, messageStreamId: UInt32) -> RTMPMessage {
        RTMPMessage(type: .dataAMF0, messageStreamId: messageStreamId,
                    payload: AMF0Value.string("@setDataFrame").serialized() + metadata.serialized())
    }
}
