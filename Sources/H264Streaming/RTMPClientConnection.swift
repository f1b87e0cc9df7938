import H264
import Logging
import NIOCore
import NIOPosix
import RTMPMessages

/// What ``RTMPPublisher`` and ``RTMPPlayer`` share up to their stream: the TCP (and TLS)
/// connection, the handshake, `Set Chunk Size`, `connect` and `createStream` — each answer
/// checked in one place (`_result`, else ``RTMPError/Code/rejected`` with the server's code).
struct RTMPClientConnection: Sendable {
    /// How to connect: the parts of ``RTMPPublisher/Configuration`` and
    /// ``RTMPPlayer/Configuration`` the connection needs.
    struct Settings: Sendable {
        var connectTimeout: Duration
        var commandTimeout: Duration
        var chunkSize: Int
        var writeBufferLimit: Int
        var tlsTrust: RTSPTLSTrust
        var flashVer: String
        var maximumMessageLength: Int
        /// The Enhanced RTMP FourCCs `connect` announces; nil: none (legacy).
        var fourCcList: [String]? = nil
    }

    let target: RTMPURL
    let channel: any Channel
    let handler: NIOLoopBound<RTMPClientHandler>
    let timeout: Duration

    var loop: any EventLoop { channel.eventLoop }

    /// Connects to `url`, shakes hands, sets the chunk size and sends `connect`.
    ///
    /// - Throws: ``RTMPError`` (``RTMPError/Code/badURL``, ``RTMPError/Code/connectionFailed``,
    ///   ``RTMPError/Code/tls``, ``RTMPError/Code/connectionClosed``, ``RTMPError/Code/timeout``,
    ///   ``RTMPError/Code/rejected``, ``RTMPError/Code/protocolViolation``); the channel is closed.
    static func open(_ url: String, group: any EventLoopGroup, settings: Settings, logger: Logger) async throws -> RTMPClientConnection {
        let target = try RTMPURL(url)
        let loop = group.next()
        let random = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let handler = try await loop.submit {
            NIOLoopBound(RTMPClientHandler(url: target.description, time: 0, random: random,
                                           maximumMessageLength: settings.maximumMessageLength, logger: logger), eventLoop: loop)
        }.get()
        let trust = settings.tlsTrust, limit = max(settings.writeBufferLimit, 2)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(TimeAmount(settings.connectTimeout))
                .channelOption(.writeBufferWaterMark, value: .init(low: limit / 2, high: limit))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if target.isSecure { try channel.pipeline.syncOperations.addHandler(trust.makeHandler(host: target.host)) }
                        try channel.pipeline.syncOperations.addHandler(handler.value)
                    }
                }
                .connect(host: target.host, port: target.port).get()
        } catch {
            throw RTMPError(.connectionFailed, "\(target): cannot connect to \(target.host):\(target.port) (\(error))")
        }
        let connection = RTMPClientConnection(target: target, channel: channel, handler: handler, timeout: settings.commandTimeout)
        do {
            do {
                try await loop.flatSubmit { handler.value.startHandshake(timeout: settings.commandTimeout, on: loop) }.get()
            } catch let error as RTMPError where target.isSecure && error.code == .connectionClosed {
                let caught = try? await loop.submit { handler.value.caughtError.map { "\($0)" } }.get()
                throw caught.flatMap { $0 }.map { RTMPError(.tls, "\(target): \(RTSPTLSTrust.describe(handshakeFailure: $0))") } ?? error
            }
            try await loop.submit {
                do throws(MediaError) { try handler.value.setChunkSize(settings.chunkSize) } catch {
                    throw RTMPError(.invalidUse, "\(target): \(error)", underlying: error)
                }
            }.get()
            _ = try await connection.call(.connect(app: target.app, tcUrl: target.tcUrl, flashVer: settings.flashVer,
                                                   fourCcList: settings.fourCcList))
            return connection
        } catch {
            try? await channel.close()
            throw error
        }
    }

    /// Sends `command` and waits for its `_result`.
    ///
    /// - Throws: ``RTMPError/Code/rejected`` for `_error` (or any other answer), the
    ///   connection's failure, ``RTMPError/Code/timeout``.
    @discardableResult
    func call(_ command: RTMPCommand) async throws -> RTMPCommand {
        let handler = handler, timeout = timeout, loop = loop
        let answer = try await loop.flatSubmit { handler.value.send(command, answered: true, timeout: timeout, on: loop) }.get()
        guard answer.name == "_result" else {
            throw RTMPError(.rejected, "\(target): \(command.name): \(answer.statusCode ?? answer.name)"
                            + (answer.statusDescription.map { " (\($0))" } ?? ""), statusCode: answer.statusCode)
        }
        return answer
    }

    /// Sends commands that want no answer, on message stream 0.
    func send(_ commands: [RTMPCommand]) async throws {
        let handler = handler, timeout = timeout, loop = loop
        try await loop.submit {
            for command in commands { _ = handler.value.send(command, answered: false, timeout: timeout, on: loop) }
        }.get()
    }

    /// `createStream`: the message stream id of its `_result`.
    func createStream(transactionId: Double) async throws -> UInt32 {
        let created = try await call(.createStream(transactionId: transactionId))
        guard let number = created.arguments.first?.number, let streamId = UInt32(exactly: number) else {
            throw RTMPError(.protocolViolation, "\(target): createStream's _result carries no stream id")
        }
        return streamId
    }

    /// Sends `command` on message stream `streamId` and waits for the `onStatus` that answers
    /// it (codes in `skipping` passed over); `prepare` runs on the event loop first, the
    /// `control` messages go right after the command.
    ///
    /// - Throws: ``RTMPError/Code/rejected`` when its code is not `expected`, the connection's
    ///   failure, ``RTMPError/Code/timeout``.
    func status(of command: RTMPCommand, streamId: UInt32, expected: String, skipping: Set<String> = [],
                followedBy control: [RTMPControlMessage] = [],
                prepare: @escaping @Sendable (RTMPClientHandler) -> Void = { _ in }) async throws {
        let handler = handler, timeout = timeout, loop = loop
        let status = try await loop.flatSubmit {
            prepare(handler.value)
            let status = handler.value.awaitStatus(timeout: timeout, what: command.name, skipping: skipping, on: loop)
            _ = handler.value.send(command, streamId: streamId, answered: false, timeout: timeout, on: loop)
            handler.value.write(control.map(\.message), chunkStreamId: RTMPControlMessage.chunkStreamId)
            return status
        }.get()
        guard status.statusCode == expected else {
            throw RTMPError(.rejected, "\(target): \(command.name): \(status.statusCode ?? "no code")"
                            + (status.statusDescription.map { " (\($0))" } ?? ""), statusCode: status.statusCode)
        }
    }
}
