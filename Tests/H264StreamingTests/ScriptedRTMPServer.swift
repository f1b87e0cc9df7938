import H264
@testable import H264Streaming
import NIOCore
import NIOPosix
import Testing
import MediaContainers
import RTMPMessages

/// An RTMP server on 127.0.0.1 that answers a publisher as nginx-rtmp does — or misbehaves as a
/// test asks — built on the module's own sans-I/O pieces (``RTMPHandshake`` in the server role,
/// ``RTMPChunkReader``, ``RTMPChunkWriter``); ``messages`` yields every message it receives.
final class ScriptedRTMPServer: Sendable {
    /// How the server behaves.
    enum Behaviour: Sendable {
        /// Answers `connect`, `createStream` and `publish` as nginx-rtmp does.
        case normal
        /// Sends S0 and half of S1 once C1 has come, then closes.
        case closeMidHandshake
        /// Answers `connect` with `_error` `NetConnection.Connect.Rejected`.
        case rejectConnect
        /// Answers `publish` with `onStatus` `NetStream.Publish.BadName` (level error).
        case rejectPublish
        /// Writes these bytes (chunks) instead of answering `connect`.
        case bytesAfterConnect([UInt8])
        /// Never answers `connect`.
        case silent
        /// Answers `play` with `onStatus` `NetStream.Play.Reset` and `…Start`, then sends these
        /// video messages and `NetStream.Play.UnpublishNotify`; `window` is the acknowledgement
        /// window it announces.
        case playing([RTMPMessage], window: UInt32 = 5_000_000)
        /// Answers `play` with `onStatus` `NetStream.Play.StreamNotFound` (level error).
        case streamNotFound
        /// Answers as ``normal``, then, once the publish has started, reads nothing until
        /// `gate` is opened (a 64 KiB receive buffer): a server that has stopped reading.
        case stalled(ReadGate)
    }

    /// Holds a ``Behaviour/stalled(_:)`` server's reads until ``open()``.
    final class ReadGate: Sendable {
        // The stalled connection once the publish has started, and whether the gate is open.
        private let state = Locked<(channel: (any Channel)?, isOpen: Bool)>((nil, false))

        init() {}

        /// Stops `channel` reading unless the gate is already open.
        fileprivate func hold(_ channel: any Channel) {
            let isOpen = state.withLock { state in
                if !state.isOpen { state.channel = channel }
                return state.isOpen
            }
            if !isOpen { try? channel.syncOptions?.setOption(.autoRead, value: false) }
        }

        /// Lets the held connection read again (and any later one read from the start).
        func open() {
            let channel = state.withLock { state in
                state.isOpen = true
                return state.channel
            }
            channel?.setOption(.autoRead, value: true).whenComplete { _ in channel?.read() }
        }
    }

    let channel: any Channel
    let messages: AsyncStream<RTMPMessage>
    /// The bytes read from every connection so far.
    let bytesReceived = Locked(0)
    let isSecure: Bool

    /// A server; with `tls`, it speaks RTMPS (TLS first).
    init(group: any EventLoopGroup, behaviour: Behaviour = .normal, tls: RTSPTLSIdentity? = nil) async throws {
        let (messages, continuation) = AsyncStream.makeStream(of: RTMPMessage.self)
        self.messages = messages
        self.isSecure = tls != nil
        let counter = bytesReceived
        var bootstrap = ServerBootstrap(group: group)
        if case .stalled = behaviour {
            bootstrap = bootstrap.childChannelOption(.socketOption(.so_rcvbuf), value: 65_536)
        }
        channel = try await bootstrap
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    if let tls { try child.pipeline.syncOperations.addHandler(tls.makeHandler()) }
                    try child.pipeline.syncOperations.addHandler(Answering(behaviour: behaviour, continuation: continuation, counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    var port: Int { channel.localAddress?.port ?? 0 }

    func url(_ path: String = "live/key") -> String { "\(isSecure ? "rtmps" : "rtmp")://127.0.0.1:\(port)/\(path)" }

    func close() async { try? await channel.close() }

    /// A misbehaving server: its name, behaviour, and the error a client must give (code,
    /// underlying code, status code).
    typealias BadPeer = (name: String, behaviour: Behaviour, code: RTMPError.Code, underlying: MediaError.Code?, status: String?)

    /// A Set Chunk Size message with `size`: a type 0 header on chunk stream 2 (timestamp 0,
    /// length 4, type 1, stream 0), then the size big-endian.
    static func setChunkSize(_ size: UInt32) -> [UInt8] {
        [0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
    }

    /// A command message (chunk stream 3, length 4, type 20) whose AMF0 string says 255 bytes and
    /// has 1.
    static let overlongString: [UInt8] = [0x03, 0, 0, 0, 0, 0, 4, 20, 0, 0, 0, 0, 0x02, 0x00, 0xFF, 0x61]

    /// The bad peers every client meets before its stream, and `refusal` (the `publish` or
    /// `play` refused).
    static func badPeers(refusingTheStream refusal: BadPeer) -> [BadPeer] { [
        ("closes mid-handshake", .closeMidHandshake, .connectionClosed, nil, nil),
        ("answers _error", .rejectConnect, .rejected, nil, "NetConnection.Connect.Rejected"),
        refusal,
        ("chunk size 0", .bytesAfterConnect(setChunkSize(0)), .protocolViolation, .rtmpChunkSizeOutOfRange, nil),
        ("chunk size 2^31", .bytesAfterConnect(setChunkSize(0x8000_0000)), .protocolViolation, .rtmpChunkSizeOutOfRange, nil),
        ("AMF0 string longer than the message", .bytesAfterConnect(overlongString), .protocolViolation, .truncated, nil),
        ("message length beyond the limit", .bytesAfterConnect([0x03, 0, 0, 0, 0xFF, 0xFF, 0xFF, 20, 0, 0, 0, 0]),
         .protocolViolation, .rtmpMessageTooLarge, nil),
        ("never answers", .silent, .timeout, nil, nil),
    ] }

    /// Starts a server behaving as `peer` says, `connect`s a client to its URL (with a command
    /// timeout of 300 ms) and expects the peer's error, its message naming the URL.
    static func expectClearError(_ peer: BadPeer, connect: (String, any EventLoopGroup, Duration) async throws -> Void) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ScriptedRTMPServer(group: group, behaviour: peer.behaviour)
        do {
            try await connect(server.url(), group, .milliseconds(300))
            Issue.record("\(peer.name): connected")
        } catch let error as RTMPError {
            #expect(error.code == peer.code, "\(peer.name): \(error)")
            #expect(error.underlying?.code == peer.underlying, "\(peer.name): \(error)")
            #expect(error.statusCode == peer.status, "\(peer.name): \(error)")
            #expect(error.description.contains(server.url()), "\(peer.name): the message names the URL: \(error)")
        }
        await server.close()
        try await group.shutdownGracefully()
    }

    private final class Answering: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var handshake = RTMPHandshake(role: .server, random: [7])
        private var reader = RTMPChunkReader()
        private var writer = RTMPChunkWriter()
        private let behaviour: Behaviour
        private let continuation: AsyncStream<RTMPMessage>.Continuation
        private let counter: Locked<Int>

        init(behaviour: Behaviour, continuation: AsyncStream<RTMPMessage>.Continuation, counter: Locked<Int>) {
            self.behaviour = behaviour
            self.continuation = continuation
            self.counter = counter
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = Array(buffer: unwrapInboundIn(data))
            counter.withLock { $0 += bytes.count }
            do {
                if !handshake.isComplete {
                    let answer = try handshake.receive(bytes)
                    if case .closeMidHandshake = behaviour, !answer.isEmpty {
                        send(Array(answer.prefix(800)), context)
                        context.close(promise: nil)
                        return
                    }
                    send(answer, context)
                    guard handshake.isComplete else { return }
                    reader.append(handshake.takeRemainder())
                } else {
                    reader.append(bytes)
                }
                while let message = try reader.nextMessage() {
                    continuation.yield(message)
                    if message.type == .commandAMF0 { try answer(try RTMPCommand(parsing: message.payload), context) }
                }
            } catch {
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
        }

        private func answer(_ command: RTMPCommand, _ context: ChannelHandlerContext) throws {
            let status = { (level: String, code: String) in AMF0Value.object([AMF0Property("level", .string(level)), AMF0Property("code", .string(code))]) }
            var out: [UInt8] = []
            switch (command.name, behaviour) {
            case ("connect", .rejectConnect):
                try writer.append(RTMPCommand(name: "_error", transactionId: 1, arguments: [status("error", "NetConnection.Connect.Rejected")]).message(),
                              chunkStreamId: 3, to: &out)
            case ("connect", .bytesAfterConnect(let bytes)):
                out = bytes
            case ("connect", .silent):
                return
            case ("connect", _):
                let window: UInt32 = if case .playing(_, let window) = behaviour { window } else { 5_000_000 }
                try writer.append(RTMPControlMessage.windowAcknowledgementSize(window).message, chunkStreamId: 2, to: &out)
                try writer.append(RTMPControlMessage.setPeerBandwidth(5_000_000, limitType: 2).message, chunkStreamId: 2, to: &out)
                try writer.append(RTMPControlMessage.userControl(.pingRequest(timestamp: 77)).message, chunkStreamId: 2, to: &out)
                try writer.append(RTMPCommand(name: "_result", transactionId: 1, commandObject: .object([AMF0Property("fmsVer", .string("FMS/3,0,1,123"))]),
                                          arguments: [status("status", "NetConnection.Connect.Success")]).message(), chunkStreamId: 3, to: &out)
            case ("createStream", _):
                try writer.append(RTMPCommand(name: "_result", transactionId: command.transactionId, arguments: [.number(1)]).message(),
                              chunkStreamId: 3, to: &out)
            case ("publish", .rejectPublish):
                try writer.append(RTMPCommand(name: "onStatus", transactionId: 0, arguments: [status("error", "NetStream.Publish.BadName")])
                    .message(messageStreamId: 1), chunkStreamId: 5, to: &out)
            case ("publish", _):
                try writer.append(RTMPControlMessage.userControl(.streamBegin(messageStreamId: 1)).message, chunkStreamId: 2, to: &out)
                try writer.append(RTMPCommand(name: "onStatus", transactionId: 0, arguments: [status("status", "NetStream.Publish.Start")])
                    .message(messageStreamId: 1), chunkStreamId: 5, to: &out)
                if case .stalled(let gate) = behaviour { gate.hold(context.channel) }
            case ("play", .streamNotFound):
                try writer.append(RTMPCommand(name: "onStatus", transactionId: 0, arguments: [status("error", "NetStream.Play.StreamNotFound")])
                    .message(messageStreamId: 1), chunkStreamId: 5, to: &out)
            case ("play", .playing(let video, _)):
                try writer.append(RTMPControlMessage.userControl(.streamBegin(messageStreamId: 1)).message, chunkStreamId: 2, to: &out)
                for code in ["NetStream.Play.Reset", "NetStream.Play.Start"] {
                    try writer.append(RTMPCommand(name: "onStatus", transactionId: 0, arguments: [status("status", code)])
                        .message(messageStreamId: 1), chunkStreamId: 5, to: &out)
                }
                for message in video { try writer.append(message, chunkStreamId: 6, to: &out) }
                try writer.append(RTMPCommand(name: "onStatus", transactionId: 0, arguments: [status("status", "NetStream.Play.UnpublishNotify")])
                    .message(messageStreamId: 1), chunkStreamId: 5, to: &out)
            default:
                return
            }
            send(out, context)
        }

        private func send(_ bytes: [UInt8], _ context: ChannelHandlerContext) {
            guard !bytes.isEmpty else { return }
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        }
    }
}
