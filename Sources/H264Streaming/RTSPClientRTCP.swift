import H264
import NIOCore
import RTP

/// The RTCP of an ``RTSPClient``'s session, on its event loop: counts the RTP packets
/// (`RTPSourceStatistics`, arrival times on the loop's clock), keeps the last sender report
/// of the stream's source (for the access units' wall-clock time) and, once started, sends a
/// receiver report with an SDES CNAME every `interval` through `send` (an interleaved frame on
/// the RTCP channel, or a datagram to the server's RTCP port). Sans-I/O but for the timer.
final class RTSPClientRTCP {
    private var statistics = RTPSourceStatistics()
    private var senderReport: (report: RTCPSenderReport, arrival: NIODeadline)?
    private let ssrc = UInt32.random(in: 1...UInt32.max)
    private var scheduled: Scheduled<Void>?
    /// Receiver reports sent so far.
    private(set) var reportsSent = 0

    /// The last sender report of the stream's source; nil before one.
    var lastSenderReport: RTCPSenderReport? { senderReport?.report }

    /// Counts an RTP packet that arrived at `now`; an unparsable one is left to the depacketizer.
    func count(packet: UnsafeRawBufferPointer, at now: NIODeadline) {
        guard let (header, _) = try? RTPHeader.parse(packet) else { return }
        // Arrival in 90 kHz units of the loop's clock (any origin: only differences count).
        statistics.count(header, arrival: UInt32(truncatingIfNeeded: now.uptimeNanoseconds / 100_000 * 9))
    }

    /// Takes a compound RTCP packet that arrived at `now`: its SR is kept when it is the stream's
    /// source (or before the first RTP packet). A damaged compound is ignored; the message says why.
    func receive(_ bytes: UnsafeRawBufferPointer, at now: NIODeadline) -> String? {
        let packets: [RTCPPacket]
        do {
            packets = try RTCPPacket.packets(in: bytes)
        } catch {
            return "an RTCP packet is damaged and ignored: \(error)"
        }
        for case .senderReport(let report, _) in packets where statistics.ssrc == nil || statistics.ssrc == report.ssrc {
            senderReport = (report, now)
        }
        return nil
    }

    /// The sender's wall-clock time of `timestamp`, since the Unix epoch; nil before an SR.
    func wallClock(of timestamp: UInt32) -> Duration? { senderReport?.report.wallClock(of: timestamp) }

    /// The compound RR + SDES for now (RFC 3550 clause 6.4.2): one block once a packet came, LSR
    /// and DLSR once a sender report came.
    func receiverReport(at now: NIODeadline) -> [UInt8] {
        let delay = senderReport.map { UInt32(clamping: (now - $0.arrival).nanoseconds * 65_536 / 1_000_000_000) } ?? 0
        let block = statistics.report(lastSenderReport: senderReport?.report.compactNTPTimestamp ?? 0, delaySinceLastSenderReport: delay)
        return RTCPReceiverReport(ssrc: ssrc, receptionReports: block.map { [$0] } ?? []).bytes
    }

    /// Sends a receiver report every `interval` on `loop`'s clock, the first one interval from now.
    func start(every interval: Duration, on loop: any EventLoop, send: @escaping ([UInt8]) -> Void) {
        scheduled = loop.assumeIsolated().scheduleTask(in: TimeAmount(interval)) { [self] in
            send(receiverReport(at: loop.now))
            reportsSent += 1
            start(every: interval, on: loop, send: send)
        }
    }

    /// No more reports.
    func cancel() {
        scheduled?.cancel()
        scheduled = nil
    }
}
