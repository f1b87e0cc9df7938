import Foundation
import H264
import HEVC
import NIOCore
import RTP

/// What a playing session sends: the RTP packets of each access unit, and RTCP sender reports.
extension RTSPConnectionHandler {
    /// Every 5 s while playing: an RTCP sender report (RFC 3550 clause 6.4.1) on the RTCP
    /// channel or port, mapping the RTP timestamps to wall-clock time.
    func sendSenderReportIfDue(context: ChannelHandlerContext) {
        guard var current = session, current.broadcasterId != nil, current.packetsSent > 0 else { return }
        let now = ContinuousClock.now
        if let last = current.lastReport, now - last < .seconds(5) { return }
        current.lastReport = now
        session = current
        let wallClock = Date().timeIntervalSince1970
        let seconds = wallClock.rounded(.down)
        let report = RTCPSenderReport(
            ssrc: current.packetizer.configuration.ssrc,
            ntpTimestamp: RTCPSenderReport.ntpTimestamp(unixSeconds: Int64(seconds), nanoseconds: Int64((wallClock - seconds) * 1e9)),
            rtpTimestamp: current.packetizer.timestamp(for: current.clock.time(at: now)),
            packetCount: current.packetsSent, octetCount: current.octetsSent, canonicalName: "h264-serve").bytes
        if let udp = current.udp {
            guard let destination = udp.rtcpDestination else { return }
            var buffer = udp.rtcp.allocator.buffer(capacity: report.count)
            buffer.writeBytes(report)
            udp.rtcp.writeAndFlush(AddressedEnvelope(remoteAddress: destination, data: buffer), promise: nil)
        } else {
            var buffer = context.channel.allocator.buffer(capacity: report.count + 4)
            buffer.writeInteger(UInt8(ascii: "$"))
            buffer.writeInteger(UInt8(truncatingIfNeeded: current.channels.lowerBound + 1))
            buffer.writeInteger(UInt16(report.count))
            buffer.writeBytes(report)
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        }
    }

    // MARK: - Frames

    /// A frame from the broadcaster (one length-prefixed access unit of either codec): sent as RTP while the session
    /// plays, dropped otherwise. Writes of this handler's own answers do not
    /// come here (they start at this handler).
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .frame(let frame) = unwrapOutboundIn(data) else {
            // The broadcaster's flush marker.
            context.write(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)), promise: promise)
            return
        }
        guard var current = session, current.broadcasterId != nil else {
            promise?.succeed(())
            return
        }
        let avcc = frame.avcc, format = frame.format
        let time = current.clock.stamp(presentationTime: frame.presentationTime, arrival: .now)
        if let udp = current.udp, let destination = udp.destination {
            var datagrams: [AddressedEnvelope<ByteBuffer>] = []
            do {
                try packetize(avcc, format: format, time: time, in: &current) { packet in
                    var buffer = udp.rtp.allocator.buffer(capacity: packet.byteCount)
                    buffer.writeBytes(packet.prefix)
                    buffer.writeBytes(packet.payload)
                    datagrams.append(AddressedEnvelope(remoteAddress: destination, data: buffer))
                }
            } catch {
                promise?.fail(error)
                return
            }
            // The frame is done when its last datagram is (the sockets share this event loop).
            for (index, datagram) in datagrams.enumerated() {
                udp.rtp.write(datagram, promise: index == datagrams.count - 1 ? promise : nil)
            }
            udp.rtp.flush()
            if datagrams.isEmpty { promise?.succeed(()) }
            return
        }
        var output = context.channel.allocator.buffer(capacity: avcc.count + avcc.count / 64 + 64)
        let channel = UInt8(truncatingIfNeeded: current.channels.lowerBound)
        do {
            try packetize(avcc, format: format, time: time, in: &current) { packet in
                output.writeInteger(UInt8(ascii: "$"))
                output.writeInteger(channel)
                output.writeInteger(UInt16(packet.byteCount))
                output.writeBytes(packet.prefix)
                output.writeBytes(packet.payload)
            }
        } catch {
            promise?.fail(error)
            return
        }
        context.write(wrapOutboundOut(output), promise: promise)
    }

    /// Packetizes one access unit for `current`, stamped `time` since its PLAY (its
    /// `RTSPPlayClock`), into `send`, counts the packets and payload octets for its sender
    /// reports, and stores the session.
    private func packetize(_ avcc: [UInt8], format: VideoFormatDescription, time: Duration, in current: inout Session,
                           _ send: (RTPPacketizer.Packet) -> Void) throws {
        var packets: UInt32 = 0, octets: UInt32 = 0
        try current.packetizer.packetize(avcc: avcc, presentationTime: time, format: format) { packet in
            packets &+= 1
            octets &+= UInt32(truncatingIfNeeded: packet.byteCount - RTPHeader.fixedSize)
            send(packet)
        }
        current.packetsSent &+= packets
        current.octetsSent &+= octets
        session = current
    }
}
