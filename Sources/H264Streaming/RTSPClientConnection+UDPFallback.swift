import Logging
import NIOCore

extension RTSPClientConnection {
    /// This connection (RTP over UDP, automatic transport) once a packet has come within
    /// `delay` of PLAY; else, as FFmpeg's `rtspdec.c` and gortsplib's client do when UDP is
    /// blocked on the way: TEARDOWN, the channels closed, and the URL played again over TCP
    /// interleaved on a new connection (DESCRIBE included: gortsplib notes that some Hikvision
    /// cameras want one before SETUP).
    func awaitingUDP(delay: Duration, credentials: RTSPCredentials?, makeHandler: @escaping @Sendable () -> RTSPClientHandler,
                     configuration: RTSPClient.Configuration, logger: Logger) async throws -> RTSPClientConnection {
        let handler = self.handler
        let heard = try await channel.eventLoop.flatSubmit { handler.value.awaitFirstPacket(within: delay) }.get()
        if heard { return self }
        logger.warning("\(url): no packet over UDP within \(delay) of PLAY; playing it again over TCP interleaved")
        await close(ending: .closed, teardownTimeout: configuration.teardownTimeout, logger: logger)
        var overTCP = configuration
        overTCP.transport = .tcp
        return try await RTSPClientConnection.connect(to: url, credentials: credentials, handler: makeHandler, on: channel.eventLoop,
                                                      configuration: overTCP, logger: logger)
    }
}
