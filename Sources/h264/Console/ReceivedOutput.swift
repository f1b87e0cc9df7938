import Foundation
import H264
import H264Decoder
import MediaContainers
import H264Streaming
import HEVC
import RTP

/// The output of `h264 receive`: the access units as Annex-B (H264Media's
/// `ReceivedAnnexBWriter`: from the first IDR on, SPS and PPS before each IDR) up to `frames`,
/// and with `decodedPath` decoded as y4m (H264Decoder's `RTPY4MWriter`; `frames` then counts
/// its frames); without a path, only decoded. H.265 access units (an H.265 camera's or
/// publisher's, an RTMP stream's `hvc1` frames) are written as Annex-B the same way, the
/// description's (or the last hvcC's) VPS, SPS and PPS before each IRAP picture without them.
final class ReceivedOutput {
    private let out: FileHandle?
    private var annexB: ReceivedAnnexBWriter
    private var hevc: ReceivedAnnexBWriter
    private let frames: Int?
    private let log: (String) -> Void
    private let decoded: (writer: RTPY4MWriter, path: String, file: FileHandle)?
    private var wroteAll = false
    /// True once `frames` access units are written (or, when decoding, decoded frames).
    var done: Bool { decoded?.writer.done ?? wroteAll }

    init(path: String?, format: VideoFormatDescription?, frames: Int?, decodedPath: String?, log: @escaping (String) -> Void) throws {
        out = try path.map(CLIIO.openOutput)
        annexB = ReceivedAnnexBWriter(parameterSets: format?.h264)
        hevc = ReceivedAnnexBWriter(hevcParameterSets: format?.codec == .hevc ? format!.parameterSets : [])
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

    /// Writes or logs one event of an RTMP stream: H.264 frames as access units stamped on a
    /// 90 kHz clock, H.265 frames as Annex-B (not decoded) after their format's parameter sets.
    func write(flv event: FLVReader.Event) throws {
        switch event {
        case .frame(let frame):
            if let unit = frame.h264AccessUnit {
                try write(.accessUnit(.init(accessUnit: unit, timestamp: UInt32(truncatingIfNeeded: frame.presentationTime * 90), endedByMarker: true)))
            } else if let unit = frame.hevcAccessUnit {
                hevc.hevcParameterSets = frame.format.parameterSets
                try write(hevc: unit)
            }
        case .skippedTag(let error), .warning(let error): log(String(describing: error))
        case .formatChanged, .endOfSequence: break
        }
    }

    /// Writes an H.265 access unit as Annex-B (not decoded).
    func write(hevc unit: HEVCAccessUnit) throws {
        guard decoded == nil else { throw CLIError("an H.265 stream is written as Annex-B (-o FILE.265); decode that with h264 decode") }
        guard !done, hevc.take(unit) else { return }
        out?.write(Data(try hevc.annexB(unit)))
        if let frames, hevc.written >= frames { wroteAll = true }
    }

    /// Logs the summary with the receiver's RTP counts (its last events already written; none
    /// for RTMP); when decoding, flushes the decoder so the last frames are written.
    func finish(_ s: RTPReceptionStatistics?) throws {
        let key = hevc.written + hevc.skipped > 0 ? "IRAP picture" : "IDR"
        log("\(out == nil ? "received" : "wrote") \(annexB.written + hevc.written) access units (\(annexB.skipped + hevc.skipped) before the first \(key) skipped)"
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
    func receive<Events: AsyncSequence>(_ events: Events, format: VideoFormatDescription?, opening: String? = nil,
                                 stop: @escaping @Sendable () async -> Void, whenDone: () -> Void = {},
                                 ending: () -> String?, statistics: (() -> RTPReceptionStatistics)? = nil) async throws
        where Events.Element: ReceivedItem {
        let sink = try receivedOutput(format: format)
        if let opening { log(opening) }
        try await StopSignal.catching(onStop: stop) {
            for try await event in events {
                try event.write(to: sink)
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

/// What `h264 receive` writes: the events of a depacketizer (RTP), a camera, a publisher or an
/// RTMP stream.
protocol ReceivedItem { func write(to output: ReceivedOutput) throws }
extension RTPDepacketizerEvent: ReceivedItem where Unit == AccessUnit { func write(to output: ReceivedOutput) throws { try output.write(self) } }
extension FLVReader.Event: ReceivedItem { func write(to output: ReceivedOutput) throws { try output.write(flv: self) } }
extension RTSPPublisher.Event: ReceivedItem {
    func write(to output: ReceivedOutput) throws {
        switch self {
        case .accessUnit(let unit): try output.write(.accessUnit(unit))
        case .hevcAccessUnit(let unit): try output.write(hevc: unit.accessUnit)
        case .loss(let loss): try output.write(.loss(loss))
        case .keyframeRequest: break
        case .diagnostic(let error): try output.write(.diagnostic(error))
        }
    }
}
extension RTSPClient.Event: ReceivedItem {
    func write(to output: ReceivedOutput) throws {
        switch self {
        case .accessUnit(let unit, _): try output.write(.accessUnit(unit))
        case .hevcAccessUnit(let unit, _): try output.write(hevc: unit.accessUnit)
        case .loss(let loss): try output.write(.loss(loss))
        case .diagnostic(let error): try output.write(.diagnostic(error))
        default: break  // The access unit carries its parameter sets; reconnections are logged by `RTSPClientOptions.events`.
        }
    }
}
