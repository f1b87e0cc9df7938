import Foundation
import H264

/// The Annex-B output of `h264 receive`: access units from the first IDR on, SPS and PPS
/// before each IDR (from the stream, else from the SDP), up to `frames`. With `decoded`, the
/// same access units also go to that decoder (and `frames` counts its frames); without a
/// path, only there.
final class ReceivedAnnexBOutput {
    private let out: FileHandle?
    private let isStandardOutput: Bool
    private let format: FormatDescription?
    private let frames: Int?
    private let log: (String) -> Void
    private let decoded: ReceivedY4MOutput?
    private var written = 0, skipped = 0, started = false
    private var wroteAll = false
    /// True once `frames` access units are written (or, with `decoded`, decoded frames).
    var done: Bool { decoded?.done ?? wroteAll }

    init(path: String?, format: FormatDescription?, frames: Int?, decoded: ReceivedY4MOutput? = nil,
         log: @escaping (String) -> Void) throws {
        out = try path.map(CLIIO.openOutput)
        isStandardOutput = path == "-"
        self.format = format
        self.frames = decoded == nil ? frames : nil
        self.decoded = decoded
        self.log = log
    }

    deinit { if !isStandardOutput { try? out?.close() } }

    /// Writes or logs every event the depacketizer has ready.
    func drain(_ depacketizer: inout RTPDepacketizer) throws {
        while let event = depacketizer.next() { try write(event) }
    }

    /// Writes or logs one event of a depacketizer.
    func write(_ event: RTPDepacketizer.Event) throws {
        switch event {
        case .accessUnit(let received):
            guard !done else { return }
            let unit = received.accessUnit
            if !started {
                guard unit.isIDR else { skipped += 1; return }
                started = true
            }
            if let out {
                let record = unit.formatDescription?.configurationRecord ?? format?.configurationRecord
                out.write(Data(try AnnexB.fromAVCC(unit.data, lengthSize: 4, parameterSets: record)))
            }
            try decoded?.decode(received)
            written += 1
            if let frames, written >= frames { wroteAll = true }
        case .loss(let loss):
            log("lost \(loss.packetCount) packet(s) from sequence number \(loss.firstSequenceNumber)")
        case .keyframeRequest:
            break   // No RTCP feedback is sent.
        case .diagnostic(let error):
            log(String(describing: error))
        }
    }

    /// Flushes the depacketizer (unless done) and logs the summary; with `decoded`, flushes the
    /// decoder so the last frames are written.
    ///
    /// - Throws: an error of the decoded output (a size change, a failed write).
    func finish(_ depacketizer: inout RTPDepacketizer) throws {
        if !done {
            depacketizer.finish()
            do { try drain(&depacketizer) } catch { log(String(describing: error)) }
        }
        try finish(packets: depacketizer.packetCount, lost: depacketizer.lostPacketCount, dropped: depacketizer.droppedAccessUnitCount)
    }

    /// Logs the summary with the depacketizer's counts (its last events already written);
    /// with `decoded`, flushes the decoder so the last frames are written.
    func finish(packets: Int, lost: Int, dropped: Int) throws {
        log("\(out == nil ? "received" : "wrote") \(written) access units (\(skipped) before the first IDR skipped); \(packets) packets, "
            + "\(lost) lost, \(dropped) access units dropped")
        if let decoded { log(try decoded.finish()) }
    }
}
