import H264
@testable import H264Streaming
import NIOCore
import NIOPosix
import H264TestSupport
import Testing
import RTP
import RTSPMessages

/// `RTSPClient.open` against a scripted camera on loopback that wants Digest credentials and
/// serves RTP over TCP only: the automatic transport falls back from UDP on 461, the URL's user
/// info authenticates and is in no Request-URI, and without `GET_PARAMETER` in `Public` the
/// keepalive is OPTIONS with the session.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct RTSPClientTransportTests {
    /// The camera: Digest (SHA-256, qop=auth) for everything but OPTIONS; SETUP over UDP is 461.
    static func camera(group: any EventLoopGroup) async throws -> ScriptedRTSPServer {
        let sdp = SessionDescription(formatDescription: StreamingFixtures.format, address: "0.0.0.0", port: 0).text
        return try await ScriptedRTSPServer(group: group) { request in
            let cSeq = request.cSeq
            if request.method != "OPTIONS" && request.header("Authorization") == nil {
                return RTSPResponse(status: RTSPStatus(code: 401, reasonPhrase: "Unauthorized"), cSeq: cSeq, headers: [
                    ("WWW-Authenticate", #"Basic realm="cam""#),
                    ("WWW-Authenticate", #"Digest realm="cam", nonce="abc", algorithm=SHA-256, qop="auth""#),
                ])
            }
            switch request.method {
            case "OPTIONS": return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Public", "OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN")])
            case "DESCRIBE": return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Content-Type", "application/sdp")], body: Array(sdp.utf8))
            case "SETUP" where request.header("Transport")?.hasPrefix("RTP/AVP/TCP") == true:
                return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Transport", "RTP/AVP/TCP;unicast;interleaved=0-1"),
                                                                      ("Session", "CAFE;timeout=60")])
            case "SETUP": return RTSPResponse(status: .unsupportedTransport, cSeq: cSeq)
            default: return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Session", "CAFE")])
            }
        }
    }

    @Test func automaticFallsBackToTCPOn461WithTheURLsCredentials() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let camera = try await Self.camera(group: group)
        var configuration = RTSPClient.Configuration()
        configuration.keepAliveInterval = .milliseconds(50)
        let client = try await RTSPClient.open(url: "rtsp://ad%40min:s3cret@127.0.0.1:\(camera.port)/cam", group: group,
                                               configuration: configuration)
        #expect(client.url == "rtsp://127.0.0.1:\(camera.port)/cam")
        #expect(client.udpPort == nil && client.transport.interleavedChannels == 0...1)
        var requests: [RTSPRequest] = []
        for await request in camera.requests {
            requests.append(request)
            if request.method == "OPTIONS" && request.session == "CAFE" { break } // the keepalive
        }
        #expect(requests.map(\.method) == ["OPTIONS", "DESCRIBE", "DESCRIBE", "SETUP", "SETUP", "PLAY", "OPTIONS"])
        #expect(requests.allSatisfy { !$0.uri.contains("@") && !$0.uri.contains("admin") }, "\(requests.map(\.uri))")
        let setups = requests.filter { $0.method == "SETUP" }.compactMap { $0.header("Transport") }
        #expect(setups.count == 2 && setups[0].hasPrefix("RTP/AVP;unicast;client_port=") && setups[1].hasPrefix("RTP/AVP/TCP"))
        for request in requests.dropFirst(2) {
            let digest = try #require(RTSPAuthenticationChallenge.parse(request.header("Authorization") ?? "").first)
            #expect(digest.parameter("username") == "ad@min" && digest.parameter("algorithm") == "SHA-256")
            #expect(digest.parameter("response") == RTSPAuthenticator.digestResponse(
                .sha256, user: "ad@min", realm: "cam", password: "s3cret", nonce: "abc", nc: digest.parameter("nc") ?? "",
                cnonce: digest.parameter("cnonce") ?? "", qop: "auth", method: request.method, uri: request.uri))
        }
        await client.close()
        await camera.close()
        try await group.shutdownGracefully()
    }

    /// An explicit UDP transport does not fall back: the 461 is the error.
    @Test func explicitUDPDoesNotFallBack() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let camera = try await Self.camera(group: group)
        var configuration = RTSPClient.Configuration()
        configuration.transport = .udp
        configuration.credentials = RTSPCredentials(user: "u", password: "p")
        await #expect { try await RTSPClient.open(url: "rtsp://127.0.0.1:\(camera.port)/cam", group: group, configuration: configuration) }
            throws: { ($0 as? RTSPClientError)?.status == .unsupportedTransport && "\($0)".hasPrefix("SETUP rtsp://127.0.0.1:") }
        await camera.close()
        try await group.shutdownGracefully()
    }

    /// A camera whose SETUP over UDP succeeds but whose packets never arrive (a firewall on the
    /// way), with a bogus `RTP-Info` in its PLAY answer (an unreadable `seq`, a negative
    /// `rtptime`, another URL): the automatic transport tears the session down after
    /// ``RTSPClient/Configuration/udpFallbackDelay`` and plays it again over TCP (FFmpeg's
    /// `rtspdec.c` "UDP timeout, retrying with TCP", gortsplib's `InitialUDPReadTimeout`); a
    /// packet that does come keeps UDP. The `RTP-Info` is warned about, never fatal.
    static func firewalledCamera(group: any EventLoopGroup) async throws -> ScriptedRTSPServer {
        let sdp = SessionDescription(formatDescription: StreamingFixtures.format, address: "0.0.0.0", port: 0).text
        return try await ScriptedRTSPServer(group: group) { request in
            let cSeq = request.cSeq
            switch request.method {
            case "DESCRIBE": return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Content-Type", "application/sdp")], body: Array(sdp.utf8))
            case "SETUP":
                let offer = request.header("Transport") ?? ""
                let answer = offer.hasPrefix("RTP/AVP/TCP") ? offer : offer + ";server_port=9-10"
                return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Transport", answer), ("Session", "F00D;timeout=60")])
            case "PLAY":
                return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Session", "F00D"),
                                                                        ("RTP-Info", "url=rtsp://elsewhere/track;seq=x1;rtptime=-426852246;")])
            default: return RTSPResponse(status: .ok, cSeq: cSeq, headers: [("Session", "F00D")])
            }
        }
    }

    @Test func automaticFallsBackToTCPWhenNoUDPPacketComes() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let camera = try await Self.firewalledCamera(group: group)
        var configuration = RTSPClient.Configuration()
        configuration.udpFallbackDelay = .milliseconds(200)
        let client = try await RTSPClient.open(url: "rtsp://127.0.0.1:\(camera.port)/cam", group: group, configuration: configuration)
        #expect(client.udpPort == nil && client.transport.interleavedChannels == 0...1)
        var requests: [RTSPRequest] = []
        for await request in camera.requests {
            requests.append(request)
            if request.method == "PLAY" && requests.count > 4 { break }
        }
        #expect(requests.map(\.method) == ["OPTIONS", "DESCRIBE", "SETUP", "PLAY", "TEARDOWN", "OPTIONS", "DESCRIBE", "SETUP", "PLAY"])
        let setups = requests.filter { $0.method == "SETUP" }.compactMap { $0.header("Transport") }
        #expect(setups.count == 2 && setups[0].hasPrefix("RTP/AVP;unicast;client_port=") && setups[1].hasPrefix("RTP/AVP/TCP"))
        #expect(client.rtpInfo == RTSPRTPInfo.Stream(url: "rtsp://elsewhere/track"))
        #expect(client.warnings.map { $0.field ?? "" } == ["RTP-Info seq", "RTP-Info rtptime", "RTP-Info url"], "\(client.warnings)")
        await client.close()
        await camera.close()
        try await group.shutdownGracefully()
    }

    @Test func aPacketOverUDPKeepsUDP() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let camera = try await Self.firewalledCamera(group: group)
        let sender = try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        var configuration = RTSPClient.Configuration()
        configuration.udpFallbackDelay = .seconds(60) // open returns when the packet comes, not after this
        async let opening = RTSPClient.open(url: "rtsp://127.0.0.1:\(camera.port)/cam", group: group, configuration: configuration)
        var clientPorts: ClosedRange<Int>?
        for await request in camera.requests {
            if request.method == "SETUP" { clientPorts = try RTSPTransport(parsing: request.header("Transport") ?? "").clientPorts }
            if request.method == "PLAY" { break }
        }
        // An RTCP sender report to the client's RTCP port, as the camera's first packet.
        let report: [UInt8] = [0x80, 200, 0, 6, 0, 0, 0, 7] + [UInt8](repeating: 0, count: 20)
        let rtcpPort = try #require(clientPorts?.upperBound)
        try await sender.writeAndFlush(AddressedEnvelope(remoteAddress: try SocketAddress(ipAddress: "127.0.0.1", port: rtcpPort),
                                                         data: ByteBuffer(bytes: report)))
        let client = try await opening
        #expect(client.udpPort == clientPorts?.lowerBound && client.transport.interleavedChannels == nil)
        await client.close()
        try await sender.close()
        await camera.close()
        try await group.shutdownGracefully()
    }
}
