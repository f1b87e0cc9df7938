import H264
@testable import H264Streaming
import H264TestSupport
import NIOCore
import NIOPosix
import Testing

/// RTSPS: `RTSPServer` with a TLS identity (the self-signed Fixtures/tls/rtsps-test.pem, for
/// 127.0.0.1) played by `RTSPClient` over `rtsps://`, with each way of trusting the certificate;
/// what is not trusted, or not TLS, fails with a reason and never hangs.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPSTests {
    /// The certificate's SHA-256 fingerprint (Fixtures/PROVENANCE).
    static let fingerprint = "E8:95:C9:70:FB:7A:3E:21:25:74:FB:F8:77:C7:AB:37:C6:A9:DA:86:56:DC:BB:89:5F:9C:C6:1E:CF:DE:36:9F"

    /// An RTSPS server on 127.0.0.1 with `/live` mounted.
    static func server(group: any EventLoopGroup) async throws -> (RTSPServer, Broadcaster) {
        var configuration = RTSPServer.Configuration()
        configuration.tls = try RTSPTLSIdentity(certificateChainFile: TestFixtures.path("tls/rtsps-test.pem"),
                                                privateKeyFile: TestFixtures.path("tls/rtsps-test.key"))
        let server = try await RTSPServer.start(host: "127.0.0.1", port: 0, group: group, configuration: configuration)
        return (server, server.mount("/live", format: StreamingFixtures.format))
    }

    static func trusts() throws -> [RTSPTLSTrust] {
        [try .certificates(pemFile: TestFixtures.path("tls/rtsps-test.pem")), try .fingerprint(hex: fingerprint),
         try .fingerprint(hex: fingerprint.replacingOccurrences(of: ":", with: "").lowercased()), .anyCertificate]
    }

    @Test func aTrustedCertificatePlaysOverTLS() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (server, live) = try await Self.server(group: group)
        let url = server.url(host: "127.0.0.1", path: "/live")
        #expect(url.hasPrefix("rtsps://127.0.0.1:"))
        for trust in try Self.trusts() {
            var configuration = RTSPClient.Configuration()
            configuration.tlsTrust = trust
            let client = try await RTSPClient.open(url: url, group: group, configuration: configuration)
            #expect(client.udpPort == nil && client.transport.interleavedChannels == 0...1, "automatic is TCP over TLS")
            #expect(client.formatDescription == StreamingFixtures.format)
            let sent = Array(StreamingFixtures.stream.frames.drop { !$0.isKeyframe }.prefix(4))
            for frame in sent { live.broadcast(frame) }
            var received = 0
            for await event in client {
                if case .frame = event { received += 1 }
                if received == sent.count - 1 { break }
            }
            #expect(received == sent.count - 1, "\(trust)")
            await client.close()
        }
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// The system's roots do not vouch for a self-signed certificate, nor does another fingerprint.
    @Test func anUntrustedCertificateIsATLSError() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (server, _) = try await Self.server(group: group)
        let url = server.url(host: "127.0.0.1", path: "/live")
        for trust in [RTSPTLSTrust.systemRoots, try .fingerprint(hex: String(repeating: "ab", count: 32))] {
            var configuration = RTSPClient.Configuration()
            configuration.tlsTrust = trust
            await #expect { try await RTSPClient.open(url: url, group: group, configuration: configuration) } throws: { error in
                (error as? RTSPClientError)?.code == .tls && "\(error)".contains("certificate is not trusted")
            }
        }
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// `rtsps://` to a plain server (it answers the ClientHello in plain RTSP) and `rtsp://` to
    /// an RTSPS server fail at once.
    @Test func tlsAndPlainDoNotMix() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (secure, _) = try await Self.server(group: group)
        let plain = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(PlainAnswer()) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        var configuration = RTSPClient.Configuration()
        configuration.tlsTrust = .anyCertificate
        let toPlain = "rtsps://127.0.0.1:\(plain.localAddress?.port ?? 0)/live"
        await #expect { try await RTSPClient.open(url: toPlain, group: group, configuration: configuration) } throws: { error in
            (error as? RTSPClientError)?.code == .tls && "\(error)".contains("does not speak TLS")
        }
        let toSecure = secure.url(host: "127.0.0.1", path: "/live").replacingOccurrences(of: "rtsps://", with: "rtsp://")
        await #expect { try await RTSPClient.open(url: toSecure, group: group) } throws: { error in
            (error as? RTSPClientError)?.code == .connectionClosed
        }
        try await plain.close()
        await secure.shutdown()
        try await group.shutdownGracefully()
    }

    /// A plain RTSP server's answer to whatever comes first.
    final class PlainAnswer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "RTSP/1.0 400 Bad Request\r\nCSeq: 1\r\n\r\n")), promise: nil)
        }
    }

    /// RTP over UDP would leave TLS: an RTSPS server answers 461 to it.
    @Test func udpIsRefusedOverTLS() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (server, _) = try await Self.server(group: group)
        var configuration = RTSPClient.Configuration()
        configuration.tlsTrust = .anyCertificate
        configuration.transport = .udp
        await #expect { try await RTSPClient.open(url: server.url(host: "127.0.0.1", path: "/live"), group: group, configuration: configuration) }
            throws: { ($0 as? RTSPClientError)?.status == .unsupportedTransport }
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test func badTLSFilesAndFingerprintsAreErrors() throws {
        let pem = try TestFixtures.path("tls/rtsps-test.pem"), key = try TestFixtures.path("tls/rtsps-test.key")
        #expect(throws: RTSPTLSError.self) { try RTSPTLSIdentity(certificateChainFile: key, privateKeyFile: key) }
        #expect(throws: RTSPTLSError.self) { try RTSPTLSIdentity(certificateChainFile: pem, privateKeyFile: pem) }
        #expect(throws: RTSPTLSError.self) { try RTSPTLSIdentity(certificateChainFile: "/nonexistent.pem", privateKeyFile: key) }
        #expect(throws: RTSPTLSError.self) { try RTSPTLSTrust.certificates(pemFile: key) }
        for bad in ["", "ab", String(repeating: "g", count: 64), String(repeating: "a", count: 66), String(repeating: "a", count: 63)] {
            #expect(throws: RTSPTLSError.self) { try RTSPTLSTrust.fingerprint(hex: bad) }
        }
    }

    @Test func rtspsURLs() throws {
        #expect(try RTSPURI.hostAndPort(of: "rtsps://cam.local/s") == ("cam.local", 322))
        #expect(try RTSPURI.hostAndPort(of: "RTSPS://u:p@[::1]:7441/s") == ("::1", 7441))
        #expect(try RTSPURI.hostAndPort(of: "rtsp://cam.local/s") == ("cam.local", 554))
        #expect(RTSPURI.resolve("rtsps://cam/x/trackID=1", against: "rtsps://cam/x") == "rtsps://cam/x/trackID=1")
        #expect(RTSPURI.isSecure("rtsps://cam") && !RTSPURI.isSecure("rtsp://cam"))
    }
}
