import MediaContainers
import NIOCore
import NIOHTTP1

/// One HTTP/1.1 connection of an ``HLSServer``, after NIOHTTP1's request decoder, response
/// encoder, pipelining assistance (one request answered at a time, in order) and protocol error
/// handler (400 and close for a request it cannot parse, or headers over the limit) — or one
/// HTTP/2 stream, after NIOHTTP2's codec that makes its frames HTTP/1 parts.
///
/// The decisions are `HLSHTTPExchange`'s; this handler reads the request, asks the stream —
/// in a task, since a blocking playlist reload or a preload-hinted part waits — and writes the
/// answer. A client that hangs up cancels that task, which releases its waiter at the stream.
/// A request body over ``HLSServer/Configuration/maximumBodySize`` gets 413 and the
/// connection closes; a connection that has not sent a whole request, nor waits for an answer,
/// for ``HLSServer/Configuration/idleTimeout`` closes.
final class HLSHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let streams: @Sendable (String) -> HLSLiveStream?
    private let configuration: HLSServer.Configuration
    /// The request being read (head seen, end not yet).
    private var request: HTTPRequestHead?
    /// Its body's bytes so far.
    private var bodyBytes = 0
    /// Set once a response says `Connection: close`: nothing more is read or answered.
    private var closing = false
    /// The stream's answer being awaited, for the request read last.
    private var waiting: Task<Void, Never>?
    private var idle: IdleTimer?

    init(streams: @escaping @Sendable (String) -> HLSLiveStream?, configuration: HLSServer.Configuration) {
        self.streams = streams
        self.configuration = configuration
    }

    func channelActive(context: ChannelHandlerContext) {
        idle = IdleTimer(timeout: configuration.idleTimeout, loop: context.eventLoop) { [self] in
            // Waiting for the stream is not idleness: look again later. (A request still being
            // read is: a client that sends its head and never the end is cut off.)
            if waiting != nil { idle?.start() } else { context.close(promise: nil) }
        }
        idle?.start()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        waiting?.cancel()
        waiting = nil
        idle?.cancel()
        idle = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A request NIOHTTP1 could not parse (it has answered 400), a reset: the framing or the peer is gone.
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            idle?.heard()
            request = head
            bodyBytes = 0
        case .body(let buffer):
            guard let head = request else { return }
            bodyBytes += buffer.readableBytes
            if bodyBytes > configuration.maximumBodySize {
                request = nil
                write(HLSHTTPExchange.response(status: .payloadTooLarge, body: "a request body is at most \(configuration.maximumBodySize) bytes"),
                      to: head, keepAlive: false, context: context)
            }
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    /// Answers `head` at once or, when the stream must be asked, once it has answered.
    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let ask: @Sendable () async -> HLSLiveAnswer
        switch HLSHTTPExchange.route(method: head.method, uri: head.uri, streams: streams) {
        case .respond(let response):
            return write(response, to: head, keepAlive: Self.keepsAlive(head), context: context)
        case .playlist(let stream, let request):
            ask = { await stream.playlist(for: request) }
        case .resource(let stream, let name):
            // A file already written is answered here, on the loop, from the buffer every viewer shares.
            if let file = stream.writtenFile(named: name) {
                let response = HLSHTTPExchange.response(sharing: file.buffer, contentType: file.contentType, isImmutable: file.isImmutable,
                                                        resourceMaxAge: configuration.resourceMaxAge)
                return write(response, to: head, keepAlive: Self.keepsAlive(head), context: context)
            }
            ask = { await stream.resource(named: name) }
        }
        let loop = context.eventLoop, maxAge = configuration.resourceMaxAge
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: loop)
        waiting = Task {
            let response = HLSHTTPExchange.answer(await ask(), resourceMaxAge: maxAge)
            loop.execute { bound.value.handler.answered(response, to: head, context: bound.value.context) }
        }
    }

    /// The stream's answer to `head`, on the loop: written unless the connection has gone.
    private func answered(_ response: HLSHTTPExchange.Response, to head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard waiting != nil, context.channel.isActive else { return }
        waiting = nil
        write(response, to: head, keepAlive: Self.keepsAlive(head), context: context)
    }

    /// True when the connection stays open after answering `head`: HTTP/1.1 unless `Connection:
    /// close`, HTTP/1.0 with `Connection: keep-alive`; always on an HTTP/2 stream (the stream ends
    /// with its response; the connection is not the handler's to close).
    private static func keepsAlive(_ head: HTTPRequestHead) -> Bool {
        head.version.major >= 2 || head.isKeepAlive
    }

    /// Writes `response` to `head` (no body for HEAD), and closes after it unless `keepAlive`.
    private func write(_ response: HLSHTTPExchange.Response, to head: HTTPRequestHead, keepAlive: Bool,
                       context: ChannelHandlerContext) {
        var headers = response.headers
        if !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
            closing = true
        }
        let responseHead = HTTPResponseHead(version: head.version, status: response.status, headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if head.method != .HEAD, let buffer = response.buffer {
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        } else if head.method != .HEAD, !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        idle?.heard()
        if !keepAlive {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
