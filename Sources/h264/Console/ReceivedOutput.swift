import Foundation
import H264
import H264Decoder
import H264Media
import H264Streaming

/// The output of `h264 receive`: the access units as Annex-B (H264Media's
/// `ReceivedAnnexBWriter`: from the first IDR on, SPS and PPS before each IDR) up to `frames`,
/// and with `decodedPath` decoded as y4m (H264Decoder's `RTPY4MWriter`; `frames` then counts
/// its frames); without a path, only decoded.
final class ReceivedOutput {
    private let out: FileHandle?
    private var annexB: ReceivedAnnexBWriter
    private let frames: Int?
    private let log: (String) -> Void
    private let decoded: (writer: RTPY4MWriter, path: String, file: FileHandle)?
    private var wroteAll = false
    /// True once `frames` access units are written (or, when decoding, decoded frames).
    var done: Bool { decoded?.writer.done ?? wroteAll }

    init(path: String?, format: FormatDescription?, frames: Int?, decodedPath: String?, log: @escaping (String) -> Void) throws {
        out = try path.map(CLIIO.openOutput)
        annexB = ReceivedAnnexBWriter(parameterSets: format)
        self.frames = decodedPath == nil ? frames : nil
        self.log = log
        decoded = try decodedPath.map { path in
            let file = try CLIIO.openOutput(path)
            let descriptor = file.fileDescriptor
            return (try RTPY4MWriter(frames: frames) { try writeAll(descriptor, $0, name: path) }, path, file)
        }
    }

    deinit {
        if let out, out !== FileHandle.standardOutput { try? out.close() }
        if let file = decoded?.file, file !== FileHandle.standardOutput { try? file.close() }
    }

    /// Writes or logs one event of a depacketizer.
    func write(_ event: RTPDepacketizer.Event) throws {
        switch event {
        case .accessUnit(let received):
            guard !done, annexB.take(received.accessUnit) else { return }
            out?.write(Data(try annexB.annexB(received.accessUnit)))
            try CLIError.y4m(hint: "write Annex-B (-o FILE.h264) to keep such a stream") {
                try decoded?.writer.decode(received)
            }
            if let frames, annexB.written >= frames { wroteAll = true }
        case .loss(let loss):
            log("lost \(loss.packetCount) packet(s) from sequence number \(loss.firstSequenceNumber)")
        case .keyframeRequest:
            break   // No RTCP feedback is sent.
        case .diagnostic(let error):
            log(String(describing: error))
        }
    }

    /// Logs the summary with the receiver's RTP counts (its last events already written; none
    /// for RTMP); when decoding, flushes the decoder so the last frames are written.
    func finish(_ s: RTPReceptionStatistics?) throws {
        log("\(out == nil ? "received" : "wrote") \(annexB.written) access units (\(annexB.skipped) before the first IDR skipped)"
            + (s.map { "; \($0.packets) packets, \($0.lostPackets) lost, \($0.droppedAccessUnits) access units dropped" } ?? ""))
        guard let decoded else { return }
        let summary = try CLIError.y4m(hint: "write Annex-B (-o FILE.h264) to keep such a stream") {
            try decoded.writer.finish()
        }
        var line = "decoded \(summary.frames) frames → \(decoded.path)"
        if summary.damaged > 0 { line += ", \(summary.damaged) damaged" }
        if summary.skippedAccessUnits > 0 { line += ", \(summary.skippedAccessUnits) access units before the first IDR skipped" }
        log(line)
    }
}

extension ReceiveOptions {
    /// Writes `events` until the output is done (then `whenDone`), the events end, or a stop
    /// signal (which runs `stop`); logs `opening` first and the `ending` and summary after.
    func receive<Events: AsyncSequence>(_ events: Events, format: FormatDescription?, opening: String? = nil,
                                 stop: @escaping @Sendable () async -> Void, whenDone: () -> Void = {},
                                 ending: () -> String?, statistics: (() -> RTPReceptionStatistics)? = nil) async throws
        where Events.Element == RTPDepacketizer.Event {
        let sink = try receivedOutput(format: format)
        if let opening { log(opening) }
        try await StopSignal.catching(onStop: stop) {
            for try await event in events {
                try sink.write(event)
                if sink.done {
                    whenDone()
                    break
                }
            }
        }
        if let line = ending() { log(line) }
        try sink.finish(statistics?())
    }
}
