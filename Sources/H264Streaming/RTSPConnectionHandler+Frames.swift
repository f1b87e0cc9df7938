import Foundation
import H264
import HEVC
import NIOCore
import RTP

/// What a playing session sends: the RTP packets of each access unit, and RTCP sender reports.
extension RTSPConnectionHandler {
    /// Every 5 s while playing: an RTCP sender report (RFC 3550 clause 6.4.1) on the RTCP
    /// channel or port, mapping the stream's RTP timestamps to wall-clock time (one fixed
    /// mapping: `RTSPPlayClock`), with the packets and octets this viewer was sent. (Reports
    /// sent before a session's first packet made GStreamer's `rtspsrc` hang in one start out of
    /// three over TCP: they go after it.)
    func sendSenderReportIfDue(context: ChannelHandlerContext) {
        guard var current = session, current.broadcasterId != nil,
              current.packetsSent > 0 || (current.audio?.packetsSent ?? 0) > 0,
              let broadcaster = current.mount?.broadcaster else { return }
        let now = ContinuousClock.now
        if let last = current.lastReport, now - last < .seconds(5) { return }
        guard let clock = broadcaster.rtpClock(at: now) else { return }
        current.lastReport = now
        session = current
        let wallClock = Date().timeIntervalSince1970
        let seconds = wallClock.rounded(.down)
        let ntp = RTCPSenderReport.ntpTimestamp(unixSeconds: Int64(seconds), nanoseconds: Int64((wallClock - seconds) * 1e9))
        if current.packetsSent > 0 {
            let report = RTCPSenderReport(ssrc: clock.ssrc, ntpTimestamp: ntp, rtpTimestamp: clock.timestamp,
                                          packetCount: current.packetsSent, octetCount: current.octetsSent, canonicalName: "h264-serve")
            sendRTCP(report.bytes, channel: current.channels.lowerBound, udp: current.udp, context: context)
        }
        // The audio track's report maps the same wall clock (the same instant), so players line the tracks up.
        if let audio = current.audio, audio.packetsSent > 0, let audioClock = broadcaster.audioRTPClock(at: now) {
            let report = RTCPSenderReport(ssrc: audioClock.ssrc, ntpTimestamp: ntp, rtpTimestamp: audioClock.timestamp,
                                          packetCount: audio.packetsSent, octetCount: audio.octetsSent, canonicalName: "h264-serve")
            sendRTCP(report.bytes, channel: audio.channels.lowerBound, udp: audio.udp, context: context)
        }
    }

    // MARK: - Frames

    /// A frame from the broadcaster, its RTP packets made once for the stream: written while
    /// the session plays, dropped otherwise. Interleaved on channel 0, the shared buffer itself;
    /// on another channel, this viewer's 4-byte header before each packet's slice; over UDP, one
    /// datagram per packet's slice — never a copy of the payload. Writes of this handler's own
    /// answers do not come here (they start at this handler).
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .frame(let shared) = unwrapOutboundIn(data) else {
            // The broadcaster's flush marker.
            context.write(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)), promise: promise)
            return
        }
        write(shared, context: context, promise: promise)
    }

    /// Writes `shared`'s packets for this viewer from `context` down (not flushed, except UDP's).
    func write(_ shared: FanOutFrame, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        // The session is read field by field and counted in place (a copy of it per frame and
        // viewer showed in the fan-out's profile).
        guard session?.broadcasterId != nil, let packets = shared.rtp else {
            promise?.succeed(())
            return
        }
        count(packets, of: shared)
        let (channel, udp) = destination(of: shared)
        if let udp {
            guard let destination = udp.destination else {
                promise?.succeed(())
                return
            }
            var last: AddressedEnvelope<ByteBuffer>?
            packets.forEachPacket { packet in
                if let last { udp.rtp.write(last, promise: nil) }
                last = AddressedEnvelope(remoteAddress: destination, data: packet)
            }
            // The frame is done when its last datagram is (the sockets share this event loop).
            if let last { udp.rtp.write(last, promise: promise) } else { promise?.succeed(()) }
            udp.rtp.flush()
            return
        }
        guard channel != Int(packets.channel) else {
            context.write(wrapOutboundOut(packets.interleaved), promise: promise)
            return
        }
        var last: ByteBuffer?
        packets.forEachPacket { packet in
            var header = context.channel.allocator.buffer(capacity: 4)
            header.writeInteger(UInt8(ascii: "$"))
            header.writeInteger(UInt8(truncatingIfNeeded: channel))
            header.writeInteger(UInt16(packet.readableBytes))
            if let last { context.write(wrapOutboundOut(last), promise: nil) }
            context.write(wrapOutboundOut(header), promise: nil)
            last = packet
        }
        if let last { context.write(wrapOutboundOut(last), promise: promise) } else { promise?.succeed(()) }
    }
}

extension RTSPConnectionHandler: FanOutViewer {
    /// The broadcaster's write of frames (an audio frame held for the next picture, then the
    /// picture), on this connection's event loop, from this handler down, with one flush. Over
    /// plain TCP (the common viewer) they are written with no promise; only when the kernel
    /// left some of them unwritten does an empty write after them (done when everything before
    /// it is) tell when they are written.
    func writeFrames(_ frames: [FanOutFrame]) -> EventLoopFuture<Void>? {
        guard let context = viewerContext, let last = frames.last else { return nil }
        if configuration.tls == nil, !frames.contains(where: { destination(of: $0).udp != nil }) {
            for frame in frames { write(frame, context: context, promise: nil) }
            context.flush()
            if let left = try? context.channel.syncOptions?.getOption(.bufferedWritableBytes), left == 0 { return nil }
            let promise = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)), promise: promise)
            return promise.futureResult
        }
        // Writes complete in order: the last one's promise answers for them all.
        for frame in frames.dropLast() { write(frame, context: context, promise: nil) }
        let promise = context.eventLoop.makePromise(of: Void.self)
        write(last, context: context, promise: promise)
        context.flush()
        return promise.futureResult
    }
}
