import H264
import Logging
import NIOCore
import MediaContainers
import RTMPMessages

/// One publisher's connection to an ``RTMPIngestServer``, on its event loop: the server side of
/// the handshake and of the commands (as nginx-rtmp answers them), acknowledgements, and its
/// video and audio messages read as FLV tags by `FLVReader` (module `MediaContainers`) — the one
/// reader of FLV — into its ``RTMPIncomingStream``.
final class RTMPIngestHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What the server's connections share: the live publisher (one at a time).
    struct Shared: Sendable {
        var live: RTMPIncomingStream?
        var closed = false
    }

    /// The window acknowledgement size and peer bandwidth announced (nginx-rtmp's default).
    static let window: UInt32 = 5_000_000

    private var handshake = RTMPHandshake(role: .server, time: 0, random: [0x68, 0x32, 0x36, 0x34])
    private var reader = RTMPChunkReader()
    private var writer = RTMPChunkWriter()
    /// Video and audio messages as FLV events.
    private var media = RTMPMediaReader()
    private var app: String?
    private var stream: RTMPIncomingStream?
    private let requiredApp: String?
    private let requiredKey: String?
    private let shared: Locked<Shared>
    private let logger: Logger
    private let onPublish: (RTMPIncomingStream) -> Void
    private var context: ChannelHandlerContext?

    init(app: String?, streamKey: String?, shared: Locked<Shared>, logger: Logger, onPublish: @escaping (RTMPIncomingStream) -> Void) {
        requiredApp = app
        requiredKey = streamKey
        self.shared = shared
        self.logger = logger
        self.onPublish = onPublish
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = Array(buffer: unwrapInboundIn(data))
        do throws(MediaError) {
            if !handshake.isComplete {
                send(bytes: try handshake.receive(bytes))
                guard handshake.isComplete else { return }
                reader.append(handshake.takeRemainder())
            } else {
                reader.append(bytes)
            }
            while let message = try reader.nextMessage() {
                if let number = reader.acknowledgementDue() { send(RTMPControlMessage.acknowledgement(sequenceNumber: number).message, on: 2) }
                try handle(message)
            }
        } catch {
            logger.info("RTMP publisher \(context.remoteAddress.map { "\($0)" } ?? "?"): \(error)")
            end(.protocolViolation(error))
            context.close(promise: nil)
        }
    }

    private func handle(_ message: RTMPMessage) throws(MediaError) {
        switch message.type {
        case .commandAMF0: try handle(try RTMPCommand(parsing: message.payload))
        case .video, .audio: if let stream { media.events(of: message).forEach(stream.deliver) }
        case .userControl:
            if case .userControl(.pingRequest(let time))? = try RTMPControlMessage(message) {
                send(RTMPControlMessage.userControl(.pingResponse(timestamp: time)).message, on: 2)
            }
        default: _ = try RTMPControlMessage(message)
        }
    }

    private func handle(_ command: RTMPCommand) throws(MediaError) {
        let status = { (level: String, code: String, description: String) in
            AMF0Value.object([AMF0Property("level", .string(level)), AMF0Property("code", .string(code)),
                              AMF0Property("description", .string(description))])
        }
        switch command.name {
        case "connect":
            let app = command.commandObject["app"]?.string ?? ""
            guard requiredApp == nil || requiredApp == app else {
                send(RTMPCommand(name: "_error", transactionId: command.transactionId,
                                 arguments: [status("error", "NetConnection.Connect.Rejected", "no application \(app)")]).message(), on: 3)
                context?.close(promise: nil)
                return
            }
            self.app = app
            send(RTMPControlMessage.windowAcknowledgementSize(Self.window).message, on: 2)
            send(RTMPControlMessage.setPeerBandwidth(Self.window, limitType: 2).message, on: 2)
            var bytes: [UInt8] = []
            try writer.setChunkSize(4096, appendingTo: &bytes)
            send(bytes: bytes)
            send(RTMPCommand(name: "_result", transactionId: command.transactionId,
                             commandObject: .object([AMF0Property("fmsVer", .string("FMS/3,0,1,123")), AMF0Property("capabilities", .number(31))]),
                             arguments: [status("status", "NetConnection.Connect.Success", "Connection succeeded.")]).message(), on: 3)
        case "createStream":
            send(RTMPCommand(name: "_result", transactionId: command.transactionId, arguments: [.number(1)]).message(), on: 3)
        case "releaseStream", "FCPublish", "getStreamLength":
            if command.transactionId != 0 {
                send(RTMPCommand(name: "_result", transactionId: command.transactionId, arguments: [.undefined]).message(), on: 3)
            }
        case "publish":
            let key = command.arguments.first?.string ?? ""
            let taken = shared.withLock { shared -> Bool in
                guard shared.live == nil, !shared.closed else { return true }
                return false
            }
            guard let app, requiredKey == nil || requiredKey == key, !taken, stream == nil else {
                send(RTMPCommand(name: "onStatus", transactionId: 0, arguments: [status("error", "NetStream.Publish.BadName",
                                                                                       "\(key) is not accepted here")])
                    .message(messageStreamId: 1), on: 5)
                return
            }
            let channel = context?.channel
            let incoming = RTMPIncomingStream(app: app, streamKey: key, remoteAddress: channel?.remoteAddress) { channel?.close(promise: nil) }
            shared.withLock { $0.live = incoming }
            stream = incoming
            send(RTMPControlMessage.userControl(.streamBegin(messageStreamId: 1)).message, on: 2)
            send(RTMPCommand(name: "onStatus", transactionId: 0, arguments: [status("status", "NetStream.Publish.Start", "\(key) is now published.")])
                .message(messageStreamId: 1), on: 5)
            logger.info("RTMP publisher \(channel?.remoteAddress.map { "\($0)" } ?? "?"): publishing \(app)/\(key)")
            onPublish(incoming)
        case "FCUnpublish", "deleteStream", "closeStream":
            end(.unpublished)
        default:
            logger.debug("RTMP publisher: \(command.name) ignored")
        }
    }

    private func send(_ message: RTMPMessage, on chunkStreamId: Int) {
        var bytes: [UInt8] = []
        do throws(MediaError) {
            try writer.append(message, chunkStreamId: chunkStreamId, to: &bytes)
        } catch {
            logger.warning("RTMP publisher: not sent: \(error)")
        }
        send(bytes: bytes)
    }

    private func send(bytes: [UInt8]) {
        guard let context, !bytes.isEmpty else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    /// Ends the publish (once) and frees the server's one place.
    private func end(_ ending: RTMPIncomingStream.Ending) {
        guard let stream else { return }
        self.stream = nil
        media.finish().forEach(stream.deliver)
        stream.end(ending)
        shared.withLock { if $0.live === stream { $0.live = nil } }
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(shared.withLock { $0.closed } ? .stopped : .connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("RTMP publisher: \(error)")
        context.close(promise: nil)
    }
}
