import H264
import HEVC
import Logging
import NIOCore
import RTP

/// The publishing slot of a record path of an ``RTSPServer``: which RTSP connection holds it, the stream it
/// announced (of either codec, `VideoRTPDepacketizer`), the ``RTSPPublisher`` its events go to once it records,
/// and how the recording ends.
///
/// Lives on the event loop of the listener and of all its connections (one thread), so it needs
/// no lock. The slot goes to the first connection whose ANNOUNCE is accepted; until its RECORD,
/// a connection that closes (or announces nothing usable) frees it again. From the RECORD on,
/// the recording ends at the publisher's TEARDOWN or when its connection closes, after the idle
/// timeout without a packet, or when stopped; the slot is then free for the next publisher.
final class RTSPRecording {
    /// The announced stream.
    private struct Stream {
        var depacketizer: VideoRTPDepacketizer
        let description: SessionDescription
        var publisher: RTSPPublisher?
        /// The announced audio track's depacketizer; nil without one.
        var audio: AudioRTPDepacketizer?
        /// Both tracks' presentation times, on one timeline.
        var timeline = RTSPSessionTimeline()
    }

    private let configuration: RTSPServer.Configuration
    private let logger: Logger
    private let loop: any EventLoop
    private let publishers: AsyncStream<RTSPPublisher>.Continuation
    /// The connection (its handler's identity) that announced the stream; nil while the slot is free.
    private(set) var publisher: ObjectIdentifier?
    /// True from the publisher's RECORD on.
    private(set) var isRecording = false
    /// True once the server is shutting down: nothing more is accepted.
    private(set) var isClosed = false
    private var stream: Stream?
    /// When the last packet came, on the loop's clock (`EventLoop.now`: tests move it).
    private var lastPacket = NIODeadline.uptimeNanoseconds(0)
    /// How long to wait for packets after the publisher left (nonzero for UDP).
    private var lingering = Duration.zero
    /// True once the publisher has left (TEARDOWN or closed) after recording.
    private var isLeaving = false
    /// The UDP sockets of a publisher that left while recording: closed when the recording ends.
    private var lingeringChannels: [any Channel] = []

    init(configuration: RTSPServer.Configuration, logger: Logger, loop: any EventLoop,
         publishers: AsyncStream<RTSPPublisher>.Continuation) {
        self.configuration = configuration
        self.logger = logger
        self.loop = loop
        self.publishers = publishers
    }

    /// Logs `line`.
    func log(_ line: String) { logger.info("\(line)") }

    /// Gives the slot to `connection` for the stream `description` announces.
    ///
    /// - Returns: false when another connection holds the slot.
    /// - Throws: `MediaError` (`unsupported`) for packetization-mode 2.
    func announce(_ description: SessionDescription, by connection: ObjectIdentifier) throws(MediaError) -> Bool {
        guard publisher == nil || publisher == connection, !isRecording, !isClosed else { return false }
        stream = Stream(depacketizer: try VideoRTPDepacketizer(description, reorderWindow: configuration.reorderWindow),
                        description: description, audio: description.audio.map { AudioRTPDepacketizer(media: $0) },
                        timeline: RTSPSessionTimeline(audioClockRate: description.audio?.clockRate ?? 90_000))
        publisher = connection
        return true
    }

    /// The publisher's RECORD: RTP is accepted from now on, and the publisher is handed to the
    /// server's sequence. `lingering`: how long the recording still takes packets after the
    /// publisher has left, once they stop coming (UDP packets sent before a TEARDOWN may arrive
    /// after it; TCP needs none).
    func record(by connection: ObjectIdentifier, lingering: Duration, remoteAddress: SocketAddress?) {
        guard connection == publisher, !isRecording, let description = stream?.description else { return }
        isRecording = true
        self.lingering = lingering
        lastPacket = loop.now
        let recording = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        let published = RTSPPublisher(sessionDescription: description, remoteAddress: remoteAddress) {
            loop.execute { recording.value.finish(.stopped, reason: nil) }
        }
        stream?.publisher = published
        publishers.yield(published)
    }

    /// Closes `channels` (the UDP sockets of the publisher that is leaving) when the recording
    /// ends: packets sent before its TEARDOWN may still arrive there.
    func closeWhenFinished(_ channels: any Channel...) {
        lingeringChannels += channels
    }

    /// `connection` ends its session (TEARDOWN, or the connection closed). Before RECORD this
    /// frees the slot; after it, the recording ends: at once, or once no packet has come for
    /// the `lingering` of ``record(by:lingering:remoteAddress:)`` (at most 2 s later).
    func leave(_ connection: ObjectIdentifier, ending: RTSPPublisher.Ending, reason: String) {
        guard connection == publisher, !isLeaving else { return }
        guard isRecording else {
            publisher = nil
            stream = nil
            return
        }
        isLeaving = true
        let now = loop.now
        finishWhenQuiet(ending: ending, reason: reason, since: now, deadline: now + .seconds(2))
    }

    /// Finishes once neither a packet nor the leaving (at `left`) is more recent than `lingering`.
    private func finishWhenQuiet(ending: RTSPPublisher.Ending, reason: String, since left: NIODeadline, deadline: NIODeadline) {
        let now = loop.now
        if now - max(lastPacket, left) >= TimeAmount(lingering) || now >= deadline { return finish(ending, reason: reason) }
        loop.assumeIsolated().scheduleTask(in: .milliseconds(20)) { [self] in
            finishWhenQuiet(ending: ending, reason: reason, since: left, deadline: deadline)
        }
    }

    /// One RTP packet of the publisher `connection` (interleaved, or a UDP datagram):
    /// depacketized, and its events delivered.
    func receive(packet: UnsafeRawBufferPointer, from connection: ObjectIdentifier) {
        guard connection == publisher, isRecording, stream != nil else { return }
        lastPacket = loop.now
        stream!.depacketizer.append(packet: packet)
        deliver()
    }

    /// One RTP packet of the publisher's audio track: depacketized, and its frames delivered
    /// as `.frame` events (format `.audio`) on the video's timeline.
    func receive(audioPacket packet: UnsafeRawBufferPointer, from connection: ObjectIdentifier) {
        guard connection == publisher, isRecording, stream?.audio != nil else { return }
        lastPacket = loop.now
        stream!.audio!.append(packet: Array(packet))
        deliver()
    }

    /// One RTCP packet of the publisher on `track`: its sender report lines the tracks up.
    func receive(rtcp packet: UnsafeRawBufferPointer, track: RTSPSessionTimeline.Track, from connection: ObjectIdentifier) {
        guard connection == publisher, isRecording, stream != nil, let packets = try? RTCPPacket.packets(in: packet) else { return }
        for case .senderReport(let report, _) in packets { stream!.timeline.senderReport(report, for: track) }
    }

    /// Hands the depacketizers' ready events to the publisher, the frames' presentation times
    /// on the session's timeline.
    private func deliver() {
        guard let stream, let published = stream.publisher else { return }
        var depacketizer = stream.depacketizer, timeline = stream.timeline, audio = stream.audio
        let arrival = Duration.nanoseconds(Int64(clamping: loop.now.uptimeNanoseconds))
        var events: [RTSPPublisher.Element] = []
        while let event = depacketizer.next() {
            guard case .frame(var received) = event else {
                events.append(event)
                continue
            }
            let time = timeline.time(of: received.timestamp, track: .video, arrival: arrival)
            received.frame.presentationTime = time
            received.frame.decodeTime = time
            events.append(.frame(received))
        }
        while let event = audio?.next() {
            switch event {
            case .accessUnit(var received):
                let time = timeline.time(of: received.timestamp, track: .audio, arrival: arrival)
                received.accessUnit.presentationTime = time
                received.accessUnit.decodeTime = time
                events.append(.frame(received))
            case .loss(let loss): events.append(.loss(loss))
            case .diagnostic(let error): events.append(.diagnostic(error))
            case .keyframeRequest: break
            }
        }
        self.stream?.depacketizer = depacketizer
        self.stream?.timeline = timeline
        self.stream?.audio = audio
        published.deliver(events, statistics: RTPReceptionStatistics(counting: depacketizer))
    }

    /// Called every ``RTSPServer/Configuration/recordCheckInterval``: the idle timeout
    /// ends the recording.
    func check() {
        guard isRecording, !isLeaving, let idle = configuration.idleTimeout, loop.now - lastPacket > TimeAmount(idle) else { return }
        let seconds = Double(idle.components.seconds) + Double(idle.components.attoseconds) / 1e18
        finish(.idle, reason: "no packet for \(seconds) s")
    }

    /// Ends the recording: flushes the depacketizer to the publisher, logs `reason`, ends the
    /// publisher's sequence and frees the slot.
    func finish(_ ending: RTSPPublisher.Ending, reason: String?) {
        guard isRecording else { return }
        if let reason { log(reason) }
        stream?.depacketizer.finish()
        deliver()
        stream?.publisher?.end(ending)
        for channel in lingeringChannels { channel.close(promise: nil) }
        lingeringChannels = []
        stream = nil
        publisher = nil
        isRecording = false
        isLeaving = false
    }

    /// The server shuts down: the recording ends, and no publisher is accepted any more.
    func close() {
        finish(.stopped, reason: nil)
        isClosed = true
        publisher = nil
        stream = nil
        publishers.finish()
    }
}
