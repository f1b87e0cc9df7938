import H264
import NIOCore

/// The one recording of `h264 receive --listen`: which RTSP connection holds the publishing
/// slot, the stream it announced (an `RTPDepacketizer` and the `ReceivedAnnexBOutput` it
/// feeds), and how the recording ends.
///
/// Lives on the event loop of the listener and of all its connections (one thread), so it needs
/// no lock. The slot goes to the first connection whose ANNOUNCE is accepted; until its RECORD,
/// a connection that closes (or announces nothing usable) frees it again. From the RECORD on,
/// the recording ends (``ended`` succeeds) at the publisher's TEARDOWN or when its connection
/// closes, after `--frames` access units, after `--idle-timeout` seconds without a packet, or
/// on SIGINT/SIGTERM; ``ended`` fails when the output cannot be written.
final class RTSPRecording {
    /// The depacketizer of the announced stream and the output it is drained into.
    private struct Stream {
        var depacketizer: RTPDepacketizer
        let output: ReceivedAnnexBOutput
    }

    /// Resolved once the recording is over (the output is then complete).
    let ended: EventLoopPromise<Void>
    /// The connection (its handler's identity) that announced the stream; nil while the slot is free.
    private(set) var publisher: ObjectIdentifier?
    /// True from the publisher's RECORD on.
    private(set) var isRecording = false
    /// True once the recording has ended.
    private(set) var isFinished = false
    private let command: ReceiveCommand
    private let loop: any EventLoop
    private var stream: Stream?
    private var lastPacket = ContinuousClock.now
    /// How long to wait for packets after the publisher left (nonzero for UDP).
    private var lingering = Duration.zero
    /// True once the publisher has left (TEARDOWN or closed) after recording.
    private var isLeaving = false

    /// A free slot; `command` gives the output path, `--frames`, `--idle-timeout`, the
    /// depacketizer's settings and the log.
    init(command: ReceiveCommand, loop: any EventLoop) {
        self.command = command
        self.loop = loop
        ended = loop.makePromise(of: Void.self)
    }

    /// Writes `line` to standard error (unless `--quiet`).
    func log(_ line: String) { command.log(line) }

    /// Gives the slot to `connection` for the stream `description` announces, opening the output.
    ///
    /// - Returns: false when another connection holds the slot.
    /// - Throws: `H264Error` (`unsupported`) for packetization-mode 2; the output's error when it
    ///   cannot be opened.
    func announce(_ description: SessionDescription, by connection: ObjectIdentifier) throws -> Bool {
        guard publisher == nil || publisher == connection, !isRecording, !isFinished else { return false }
        let (depacketizer, format) = try command.depacketizer(for: description)
        stream = Stream(depacketizer: depacketizer, output: try command.receivedOutput(format: format))
        publisher = connection
        return true
    }

    /// The publisher's RECORD: RTP is accepted from now on. `lingering`: how long the
    /// recording still takes packets after the publisher has left, once they stop coming (UDP
    /// packets sent before a TEARDOWN may arrive after it; TCP needs none).
    func record(by connection: ObjectIdentifier, lingering: Duration) {
        guard connection == publisher, !isFinished else { return }
        isRecording = true
        self.lingering = lingering
        lastPacket = .now
    }

    /// `connection` ends its session (TEARDOWN, or the connection closed). Before RECORD this
    /// frees the slot; after it, the recording ends: at once, or once no packet has come for
    /// the `lingering` of ``record(by:lingering:)`` (at most 2 s later).
    func leave(_ connection: ObjectIdentifier, reason: String) {
        guard connection == publisher, !isFinished, !isLeaving else { return }
        guard isRecording else {
            publisher = nil
            stream = nil
            return
        }
        isLeaving = true
        let now = ContinuousClock.now
        finishWhenQuiet(reason: reason, since: now, deadline: now + .seconds(2))
    }

    /// Finishes once neither a packet nor the leaving (at `left`) is more recent than `lingering`.
    private func finishWhenQuiet(reason: String, since left: ContinuousClock.Instant, deadline: ContinuousClock.Instant) {
        let now = ContinuousClock.now
        if now - max(lastPacket, left) >= lingering || now >= deadline { return finish(reason: reason) }
        loop.assumeIsolated().scheduleTask(in: .milliseconds(20)) { [self] in
            finishWhenQuiet(reason: reason, since: left, deadline: deadline)
        }
    }

    /// One RTP packet of the publisher `connection` (interleaved, or a UDP datagram):
    /// depacketized, and what is complete written.
    func receive(packet: UnsafeRawBufferPointer, from connection: ObjectIdentifier) {
        guard connection == publisher, isRecording, !isFinished, stream != nil else { return }
        lastPacket = .now
        stream!.depacketizer.append(packet: packet)
        do {
            try stream!.output.drain(&stream!.depacketizer)
        } catch {
            return fail(error)
        }
        if stream!.output.done { finish(reason: nil) }
    }

    /// Called every 200 ms: SIGINT/SIGTERM and the idle timeout end the recording.
    func check() {
        guard !isFinished else { return }
        if receiveStopRequested.load(ordering: .relaxed) { return finish(reason: nil) }
        if isRecording, ContinuousClock.now - lastPacket > .seconds(command.idleTimeout) {
            finish(reason: "no packet for \(command.idleTimeout) s")
        }
    }

    /// Ends the recording: flushes the depacketizer into the output, logs `reason` and the
    /// output's summary, and resolves ``ended`` (failed when the output's last frames cannot be
    /// written).
    func finish(reason: String?) {
        guard !isFinished else { return }
        isFinished = true
        if let reason { command.log(reason) }
        guard var stream else { return ended.succeed(()) }
        defer { self.stream = stream }
        do {
            try stream.output.finish(&stream.depacketizer)
            ended.succeed(())
        } catch {
            ended.fail(error)
        }
    }

    /// Ends the command with `error` (the output cannot be written).
    func fail(_ error: any Error) {
        guard !isFinished else { return }
        isFinished = true
        ended.fail(error)
    }
}
