import MediaCore
import NIOCore
import RTP

/// The audio track of an ``RTSPClient``'s session: its RTP to the `AudioRTPDepacketizer`, its
/// RTCP to its own `RTSPClientRTCP` (sender reports to the session's timeline), and its frames
/// out as the same ``RTSPClient/Event/frame(_:)`` events as video's, on the same timeline.
extension RTSPClientHandler {
    /// Starts depacketizing the audio track `media` (after its SETUP).
    func playAudio(_ media: AudioMediaDescription) {
        audioDepacketizer = AudioRTPDepacketizer(media: media)
        timeline.setAudioClockRate(media.clockRate)
    }

    /// One RTP packet of the audio track: depacketized, and its frames delivered.
    func receive(audioPacket packet: UnsafeRawBufferPointer) {
        guard !ended, audioDepacketizer != nil, let loop = context?.eventLoop else { return }
        heard()
        idleTimer?.heard()
        audioRTCP.count(packet: packet, at: loop.now)
        audioDepacketizer!.append(packet: Array(packet))
        deliverAudio()
    }

    /// One compound RTCP packet of the audio track: its sender report goes to the timeline.
    func receive(audioRTCP packet: UnsafeRawBufferPointer) {
        guard !ended, let loop = context?.eventLoop else { return }
        heard()
        if let problem = audioRTCP.receive(packet, at: loop.now) { logger.debug("audio: \(problem)") }
        if let report = audioRTCP.lastSenderReport { timeline.senderReport(report, for: .audio) }
    }

    /// Sends the audio track's RTCP receiver reports every `interval` through `send`, or on its
    /// RTCP interleaved channel when `send` is nil.
    func startAudioReceiverReports(every interval: Duration, send: (([UInt8]) -> Void)? = nil) {
        guard let context, !ended else { return }
        let channel = audioRTCPChannel ?? 3
        audioRTCP.start(every: interval, on: context.eventLoop, send: send ?? { [self] report in
            guard let context = self.context else { return }
            var buffer = context.channel.allocator.buffer(capacity: report.count + 4)
            buffer.writeBytes([UInt8(ascii: "$"), channel, UInt8(report.count >> 8), UInt8(report.count & 0xFF)])
            buffer.writeBytes(report)
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        })
    }

    /// The audio depacketizer's events: frames on the session's timeline (with their wall-clock
    /// time once a sender report came), losses and diagnostics. After a reconnection, nothing
    /// before the video keyframe that opens the gate.
    func deliverAudio() {
        guard audioDepacketizer != nil else { return }
        while let event = audioDepacketizer!.next() {
            switch event {
            case .accessUnit(var received):
                guard gate.isOpen else { continue }
                let now = context?.eventLoop.now
                received.wallClock = audioRTCP.lastSenderReport?.wallClock(of: received.timestamp,
                                                                          clockRate: audioDepacketizer!.media.clockRate)
                let time = timeline.time(of: received.timestamp, track: .audio, arrival: Self.arrival(now))
                received.accessUnit.presentationTime = time
                received.accessUnit.decodeTime = time
                yield(.frame(received))
            case .loss(let loss):
                yield(.loss(loss))
            case .diagnostic(let error):
                yield(.diagnostic(error))
            case .keyframeRequest:
                break
            }
        }
    }

    /// An arrival on the loop's clock as a duration (the timeline counts differences only).
    static func arrival(_ now: NIODeadline?) -> Duration {
        .nanoseconds(Int64(clamping: now?.uptimeNanoseconds ?? 0))
    }
}
