import H264
import Logging
import NIOCore
import RTMPMessages

/// The connection of an ``RTMPPublisher`` or an ``RTMPPlayer``, on its event loop: the
/// handshake, the chunk stream both ways (`RTMPChunkReader`, `RTMPChunkWriter`), the answers to
/// commands matched by transaction id, `onStatus` handed to whoever waits for it, acknowledgements
/// when the server's window fills, ping responses, and a player's video and end of stream to its
/// ``playback`` callback. The first failure — the server closing, a broken chunk stream, a
/// timeout — fails everything that waits, and every later request.
final class RTMPClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Chunk stream ids, as FFmpeg assigns them: commands on 3, the stream's commands and data
    /// on 5, video on 6; audio on 4 (FFmpeg's `RTMP_AUDIO_CHANNEL`, OBS's audio chunk stream).
    enum ChunkStream {
        static let command = 3
        static let audio = 4
        static let streamCommand = 5
        static let video = 6
    }

    /// What a player's connection hands on.
    enum Playback {
        /// A video or audio message.
        case media(RTMPMessage)
        /// The stream ended: nil when the server said so (`NetStream.Play.UnpublishNotify`,
        /// `…Stop`, `…Complete`, Stream EOF), else the connection's failure.
        case ended(RTMPError?)
    }

    /// The `onStatus` codes of a play that end it without an error.
    static let endOfPlayCodes: Set<String> = ["NetStream.Play.UnpublishNotify", "NetStream.Play.Stop", "NetStream.Play.Complete"]

    private var handshake: RTMPHandshake
    private var reader: RTMPChunkReader
    private var writer = RTMPChunkWriter()
    private var handshakeWaiter: EventLoopPromise<Void>?
    private var answers: [Double: EventLoopPromise<RTMPCommand>] = [:]
    private var statusWaiter: (promise: EventLoopPromise<RTMPCommand>, skipping: Set<String>)?
    /// A player's receiver of video and of the end of the stream.
    var playback: ((Playback) -> Void)?
    private var context: ChannelHandlerContext?
    private let url: String
    private let logger: Logger
    /// The first failure; every later request fails with it.
    private(set) var failure: RTMPError?
    /// The first error the pipeline caught (a failed TLS handshake).
    private(set) var caughtError: (any Error)?

    /// A connection to `url` whose messages may be `maximumMessageLength` bytes long (a
    /// publisher gets commands and control messages only: 1 MiB bounds them generously).
    init(url: String, time: UInt32, random: [UInt8], maximumMessageLength: Int = 1 << 20, logger: Logger) {
        reader = RTMPChunkReader(maximumMessageLength: maximumMessageLength)
        handshake = RTMPHandshake(role: .client, time: time, random: random)
        self.url = url
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        playback = nil // it holds the player's channel and queue
    }

    /// Sends C0 and C1; the future succeeds once S2 has come.
    func startHandshake(timeout: Duration, on loop: any EventLoop) -> EventLoopFuture<Void> {
        if let failure { return loop.makeFailedFuture(failure) }
        let promise = loop.makePromise(of: Void.self)
        handshakeWaiter = promise
        write(handshake.initialBytes)
        schedule(timeout, on: loop, promise, "the handshake")
        return promise.futureResult
    }

    /// Writes `command` on message stream `streamId`; with `answered`, the future is its
    /// `_result` or `_error` (the caller checks which), else it succeeds with the command at once.
    func send(_ command: RTMPCommand, streamId: UInt32 = 0, answered: Bool, timeout: Duration, on loop: any EventLoop)
        -> EventLoopFuture<RTMPCommand> {
        if let failure { return loop.makeFailedFuture(failure) }
        let promise = loop.makePromise(of: RTMPCommand.self)
        if answered {
            answers[command.transactionId] = promise
            schedule(timeout, on: loop, promise, command.name)
        } else {
            promise.succeed(command)
        }
        write([command.message(messageStreamId: streamId)], chunkStreamId: streamId == 0 ? ChunkStream.command : ChunkStream.streamCommand)
        return promise.futureResult
    }

    /// The next `onStatus` whose code is not in `skipping`, or a timeout; set up before the
    /// command that it answers is sent.
    func awaitStatus(timeout: Duration, what: String, skipping: Set<String> = [], on loop: any EventLoop) -> EventLoopFuture<RTMPCommand> {
        if let failure { return loop.makeFailedFuture(failure) }
        let promise = loop.makePromise(of: RTMPCommand.self)
        statusWaiter = (promise, skipping)
        schedule(timeout, on: loop, promise, what)
        return promise.futureResult
    }

    /// Sets the outgoing chunk size (after the Set Chunk Size message).
    func setChunkSize(_ size: Int) throws(MediaError) {
        var bytes: [UInt8] = []
        try writer.setChunkSize(size, appendingTo: &bytes)
        write(bytes)
    }

    /// Writes `messages` on chunk stream `chunkStreamId` and flushes.
    func write(_ messages: [RTMPMessage], chunkStreamId: Int) {
        var bytes: [UInt8] = []
        for message in messages {
            do throws(MediaError) {
                try writer.append(message, chunkStreamId: chunkStreamId, to: &bytes)
            } catch {
                logger.warning("\(url): not sent: \(message.type): \(error)")
            }
        }
        write(bytes)
    }

    /// Closes the connection without a reset: once everything written has gone out, half-closes
    /// it (FIN) and reads on until the server closes its side — whatever it still sends
    /// (`onStatus` answering `FCUnpublish` or `deleteStream`) is read, so the kernel never
    /// answers it with a reset — or until `timeout`, then closes. A TLS connection, which
    /// cannot half-close, closes at once after the flush.
    func closeGracefully(timeout: Duration, on loop: any EventLoop) -> EventLoopFuture<Void> {
        guard let context else { return loop.makeSucceededVoidFuture() }
        let channel = context.channel
        let flushed = loop.makePromise(of: Void.self)
        // An empty write's promise completes once everything before it is written.
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0)), promise: flushed)
        return flushed.futureResult
            .flatMap { channel.close(mode: .output) }
            .flatMapError { _ in channel.close() }
            .flatMapError { _ in loop.makeSucceededVoidFuture() }
            .flatMap {
                let deadline = loop.scheduleTask(in: TimeAmount(timeout)) { channel.close(promise: nil) }
                channel.closeFuture.whenComplete { _ in deadline.cancel() }
                return channel.closeFuture.flatMapError { _ in loop.makeSucceededVoidFuture() }
            }
    }

    /// True while the channel's outbound buffer is below its high water mark.
    var isWritable: Bool { context?.channel.isWritable ?? false }

    private func write(_ bytes: [UInt8]) {
        guard let context, !bytes.isEmpty else { return }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    /// Fails `promise` with a timeout naming `what` unless it completes first.
    private func schedule<T>(_ timeout: Duration, on loop: any EventLoop, _ promise: EventLoopPromise<T>, _ what: String) {
        let url = self.url
        let task = loop.scheduleTask(in: TimeAmount(timeout)) {
            promise.fail(RTMPError(.timeout, "\(url): no answer to \(what) within \(timeout)"))
        }
        promise.futureResult.whenComplete { _ in task.cancel() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = Array(buffer: unwrapInboundIn(data))
        do throws(MediaError) {
            if !handshake.isComplete {
                write(try handshake.receive(bytes))
                guard handshake.isComplete else { return }
                handshakeWaiter?.succeed()
                handshakeWaiter = nil
                reader.append(handshake.takeRemainder())
            } else {
                reader.append(bytes)
            }
            while let message = try reader.nextMessage() {
                if let number = reader.acknowledgementDue() {
                    write([RTMPControlMessage.acknowledgement(sequenceNumber: number).message], chunkStreamId: RTMPControlMessage.chunkStreamId)
                }
                try handle(message)
            }
        } catch {
            fail(RTMPError(error.code == .invalidRTMPHandshake ? .connectionFailed : .protocolViolation,
                           "\(url): the server broke RTMP: \(error)", underlying: error))
            context.close(promise: nil)
        }
    }

    private func handle(_ message: RTMPMessage) throws(MediaError) {
        switch message.type {
        case .video, .audio: playback?(.media(message))
        case .userControl:
            switch try RTMPControlMessage(message) {
            case .userControl(.pingRequest(let time))?:
                write([RTMPControlMessage.userControl(.pingResponse(timestamp: time)).message], chunkStreamId: RTMPControlMessage.chunkStreamId)
            case .userControl(.streamEOF)?: playback?(.ended(nil))
            default: break
            }
        case .commandAMF0:
            let command = try RTMPCommand(parsing: message.payload)
            switch command.name {
            case "_result", "_error":
                if let promise = answers.removeValue(forKey: command.transactionId) {
                    promise.succeed(command)
                } else {
                    logger.debug("\(url): \(command.name) to transaction \(command.transactionId) (not awaited)")
                }
            case "onStatus":
                logger.debug("\(url): onStatus \(command.statusCode ?? "?")")
                if let waiter = statusWaiter, !waiter.skipping.contains(command.statusCode ?? "") {
                    statusWaiter = nil
                    waiter.promise.succeed(command)
                } else if command.arguments.first?["level"]?.string == "error" {
                    fail(RTMPError(.rejected, "\(url): the server ended the stream: \(command.statusCode ?? "error")",
                                   statusCode: command.statusCode))
                    context?.close(promise: nil)
                } else if Self.endOfPlayCodes.contains(command.statusCode ?? "") {
                    playback?(.ended(nil))
                }
            default:
                logger.debug("\(url): \(command.name) from the server")
            }
        default:
            _ = try RTMPControlMessage(message) // control messages must be well formed too
        }
    }

    /// Records the first failure and fails everything that waits.
    func fail(_ error: RTMPError) {
        if failure == nil { failure = error }
        let error = failure ?? error
        handshakeWaiter?.fail(error)
        handshakeWaiter = nil
        statusWaiter?.promise.fail(error)
        statusWaiter = nil
        playback?(.ended(error))
        let waiting = answers
        answers = [:]
        for promise in waiting.values { promise.fail(error) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if caughtError == nil { caughtError = error }
        logger.debug("\(url): \(error)")
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let step = handshake.isComplete ? "" : " during the handshake"
        fail(RTMPError(.connectionClosed, "\(url): the server closed the connection\(step)"))
        context.fireChannelInactive()
    }
}
