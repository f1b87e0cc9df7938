import NIOCore
import RTP
import RTSPMessages

/// The audio track of a viewer's session: set up on its own (channels 2–3 interleaved, or its
/// own UDP port pair), its packets the stream's audio packets (made once by the broadcaster),
/// its sender reports mapping the same wall clock as the video track's.
extension RTSPConnectionHandler {
    /// The audio track of a session: its transport, interleaved channels or UDP port pair, and
    /// what it was sent (for its sender reports).
    struct AudioTrackSession {
        var transport: RTSPTransport
        var channels: ClosedRange<Int>
        var udp: UDPTransport?
        var packetsSent: UInt32 = 0
        var octetsSent: UInt32 = 0
    }

    /// SETUP of a play mount's audio track: added to the connection's session (made now, for
    /// the audio track only, when there is none yet), with the audio track's SSRC.
    func makeAudioSession(transport: RTSPTransport, path: String, mode: Mode, udp: UDPTransport?, cSeq: String?,
                          context: ChannelHandlerContext) -> RTSPResponse {
        var transport = transport
        if case .play(let mount) = mode, let media = mount.audio {
            mount.broadcaster.enableRTP(maximumTransmissionUnit: configuration.maximumTransmissionUnit)
            transport.ssrc = mount.broadcaster.enableAudioRTP(media)
        }
        let track = AudioTrackSession(transport: transport, channels: transport.interleavedChannels ?? 2...3, udp: udp)
        if var current = session, current.mountPath == path {
            current.audio?.udp?.close()
            current.audio = track
            session = current
        } else {
            session?.udp?.close()
            session?.audio?.udp?.close()
            session = Session(id: session?.id ?? makeRTSPSessionID(), mountPath: path, mode: mode, transport: transport, channels: 0...1,
                              udp: nil, takesVideo: false, audio: track)
        }
        let id = session!.id
        log("RTSP \(address(context)): session \(id) set up its audio track (\(transport.text))")
        events.yield(.sessionSetUp(session: id, path: path, address: address(context), transport: transport.text))
        return RTSPResponse(status: .ok, cSeq: cSeq, headers: [
            ("Transport", transport.text),
            ("Session", "\(id);timeout=\(configuration.sessionTimeout.components.seconds)"),
        ])
    }

    /// A recording's RTCP socket of `track`: the publisher's sender reports line the tracks up.
    func recordRTCP(_ rtcp: any Channel, box: NIOLoopBound<RTSPRecording>, identity: ObjectIdentifier, remote: String,
             track: RTSPSessionTimeline.Track) throws {
        try rtcp.pipeline.syncOperations.addHandler(RTPDatagramHandler(from: remote) { packet in
            box.value.receive(rtcp: packet, track: track, from: identity)
        })
    }

    /// Where `frame`'s packets go for this viewer: the interleaved channel and the UDP
    /// transport (nil: interleaved) of its track.
    func destination(of frame: FanOutFrame) -> (channel: Int, udp: UDPTransport?) {
        if frame.frame.format == nil { return (session?.audio?.channels.lowerBound ?? 2, session?.audio?.udp) }
        return (session?.channels.lowerBound ?? 0, session?.udp)
    }

    /// Counts `packets` as sent on `frame`'s track (for its sender reports).
    func count(_ packets: RTPFramePackets, of frame: FanOutFrame) {
        if frame.frame.format == nil {
            session?.audio?.packetsSent &+= packets.packetCount
            session?.audio?.octetsSent &+= packets.payloadOctets
        } else {
            session?.packetsSent &+= packets.packetCount
            session?.octetsSent &+= packets.payloadOctets
        }
    }

    /// Writes an RTCP packet on the RTCP channel after `channel` or to `udp`'s RTCP destination.
    func sendRTCP(_ report: [UInt8], channel: Int, udp: UDPTransport?, context: ChannelHandlerContext) {
        if let udp {
            guard let destination = udp.rtcpDestination else { return }
            var buffer = udp.rtcp.allocator.buffer(capacity: report.count)
            buffer.writeBytes(report)
            udp.rtcp.writeAndFlush(AddressedEnvelope(remoteAddress: destination, data: buffer), promise: nil)
        } else {
            var buffer = context.channel.allocator.buffer(capacity: report.count + 4)
            buffer.writeInteger(UInt8(ascii: "$"))
            buffer.writeInteger(UInt8(truncatingIfNeeded: channel + 1))
            buffer.writeInteger(UInt16(report.count))
            buffer.writeBytes(report)
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        }
    }
}
