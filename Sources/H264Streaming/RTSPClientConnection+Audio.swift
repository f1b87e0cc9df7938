import Logging
import MediaCore
import NIOCore
import NIOPosix
import RTP
import RTSPMessages

extension RTSPClientConnection {
    /// The audio track as SETUP gave it.
    struct AudioTrack: Sendable {
        /// The track's `m=audio` section.
        let media: AudioMediaDescription
        /// The transport the server answered.
        let transport: RTSPTransport
        /// Its UDP port pair (RTP over UDP); nil for TCP interleaved.
        let udp: (any Channel, any Channel)?
    }

    /// SETUP of the SDP's audio track after the video track's, in `session`: TCP interleaved on
    /// channels 2–3, or its own UDP port pair (`overUDP`), its RTP to the handler's audio
    /// depacketizer and its RTCP to the audio RTCP. nil (video only, with a warning logged and a
    /// diagnostic event) when the server refuses it (say `461 Unsupported Transport`) or its
    /// answer is unusable; nil without a word when the SDP has no audio we read, or when
    /// ``RTSPClient/Configuration/audio`` is off.
    static func setUpAudio(of description: SessionDescription, base: String, session: String, overUDP: Bool, like channel: any Channel,
                           on loop: any EventLoop, handler: NIOLoopBound<RTSPClientHandler>, configuration: RTSPClient.Configuration,
                           logger: Logger,
                           request: (String, String, [(name: String, value: String)], Set<Int>) async throws -> RTSPResponse) async -> AudioTrack? {
        guard configuration.audio, let media = description.audio else { return nil }
        let track = RTSPURI.resolve(media.control ?? "", against: base)
        func refuse(_ why: String) async {
            let message = "SETUP \(track) (audio): \(why): playing video only"
            logger.warning("\(message)")
            try? await loop.submit { handler.value.yield(.diagnostic(MediaError(.unsupported, field: "audio", message))) }.get()
        }
        var udp: (any Channel, any Channel)?
        do {
            if overUDP {
                udp = try await bindUDP(like: channel, on: loop) { packet in handler.value.receive(audioPacket: packet) }
                    rtcp: { packet in handler.value.receive(audioRTCP: packet) }
            }
            let offer = udp.map { "RTP/AVP;unicast;client_port=\($0.0.localAddress?.port ?? 0)-\(($0.0.localAddress?.port ?? 0) + 1)" }
                ?? "RTP/AVP/TCP;unicast;interleaved=2-3"
            let answer = try await request("SETUP", track, [("Transport", offer), ("Session", session)], Set(100...599))
            guard answer.status.code == 200 else {
                throw RTSPClientError(.status, "\(answer.status)", status: answer.status)
            }
            let offered = try RTSPTransport.parseList(offer)[0]
            let transport = (try? RTSPTransport.parseList(answer.header("Transport") ?? "").first) ?? offered
            let channels = transport.interleavedChannels ?? 2...3
            let serverRTCP = transport.serverPorts.flatMap { ports in
                channel.remoteAddress?.ipAddress.flatMap {
                    try? SocketAddress(ipAddress: $0, port: ports.count == 1 ? ports.lowerBound + 1 : ports.upperBound)
                }
            }
            try await loop.submit { [udp] in
                if udp == nil {
                    handler.value.audioRTPChannel = UInt8(truncatingIfNeeded: channels.lowerBound)
                    handler.value.audioRTCPChannel = UInt8(truncatingIfNeeded: channels.upperBound)
                }
                handler.value.playAudio(media)
                guard let interval = configuration.receiverReportInterval else { return }
                if let rtcp = udp?.1 {
                    guard let serverRTCP else { return }
                    handler.value.startAudioReceiverReports(every: interval) { report in
                        rtcp.writeAndFlush(AddressedEnvelope(remoteAddress: serverRTCP, data: ByteBuffer(bytes: report)), promise: nil)
                    }
                } else {
                    handler.value.startAudioReceiverReports(every: interval)
                }
            }.get()
            return AudioTrack(media: media, transport: transport, udp: udp)
        } catch {
            if let udp {
                try? await udp.0.close()
                try? await udp.1.close()
            }
            let reason = (error as? RTSPClientError)?.description ?? "\(error)"
            await refuse(reason)
            return nil
        }
    }

    /// A UDP port pair on the address family of `channel`, its RTP datagrams to `rtp` and its
    /// RTCP datagrams to `rtcp` (on the loop).
    static func bindUDP(like channel: any Channel, on loop: any EventLoop,
                        rtp: @escaping (UnsafeRawBufferPointer) -> Void,
                        rtcp: @escaping (UnsafeRawBufferPointer) -> Void) async throws -> (any Channel, any Channel) {
        let local = channel.localAddress?.protocol == .inet6 ? "::" : "0.0.0.0"
        let pair = try await UDPPortPair.bind(host: local, on: loop).get()
        _ = try? await pair.0.setOption(.socketOption(.so_rcvbuf), value: 4 << 20).get()
        do {
            try await loop.submit {
                try pair.0.pipeline.syncOperations.addHandler(RTPDatagramHandler(from: nil, receive: rtp))
                try pair.1.pipeline.syncOperations.addHandler(RTPDatagramHandler(from: nil, receive: rtcp))
            }.get()
        } catch {
            try? await pair.0.close()
            try? await pair.1.close()
            throw error
        }
        return pair
    }
}
