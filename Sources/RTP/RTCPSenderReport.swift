/// An RTCP sender report (RFC 3550 clause 6.4.1) with the SDES CNAME item that a compound RTCP
/// packet carries (clause 6.5.1): how a receiver maps the stream's RTP timestamps to wall-clock
/// time, and how much was sent.
///
/// ```swift
/// let report = RTCPSenderReport(ssrc: ssrc, ntpTimestamp: RTCPSenderReport.ntpTimestamp(unixSeconds: s, nanoseconds: ns),
///                               rtpTimestamp: packetizer.timestamp(for: now - start), packetCount: 90, octetCount: 81_000)
/// send(report.bytes)      // to the RTCP port, or interleaved on the RTCP channel
/// ```
public struct RTCPSenderReport: Hashable, Sendable {
    /// The sender's synchronization source.
    public var ssrc: UInt32
    /// Wall-clock time of the report, NTP format: seconds since 1900 in the high 32 bits, the
    /// fraction of a second in the low 32.
    public var ntpTimestamp: UInt64
    /// The RTP timestamp of the same instant as ``ntpTimestamp``.
    public var rtpTimestamp: UInt32
    /// RTP packets sent since the start (wrapping at 2³²).
    public var packetCount: UInt32
    /// RTP payload bytes sent since the start, headers not counted (wrapping at 2³²).
    public var octetCount: UInt32
    /// The canonical name of the SDES item (clause 6.5.1), at most 255 bytes of UTF-8.
    public var canonicalName: String

    /// Creates a report.
    public init(ssrc: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
                canonicalName: String = "h264") {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.canonicalName = canonicalName
    }

    /// The NTP timestamp of a Unix time (seconds since 1970 and nanoseconds within the second).
    public static func ntpTimestamp(unixSeconds: Int64, nanoseconds: Int64) -> UInt64 {
        let seconds = UInt64(truncatingIfNeeded: unixSeconds &+ 2_208_988_800)
        let fraction = (UInt64(max(0, min(nanoseconds, 999_999_999))) << 32) / 1_000_000_000
        return seconds << 32 | fraction
    }

    /// The compound packet: SR (packet type 200, no report blocks) then SDES (202) with one
    /// CNAME item, padded with zero bytes to a 32-bit boundary.
    public var bytes: [UInt8] {
        var out: [UInt8] = [0x80, 200, 0, 6]
        func append32(_ value: UInt32) { out += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        append32(ssrc)
        append32(UInt32(ntpTimestamp >> 32))
        append32(UInt32(ntpTimestamp & 0xFFFF_FFFF))
        append32(rtpTimestamp)
        append32(packetCount)
        append32(octetCount)
        return out + RTCPSourceDescription.canonicalNameBytes(ssrc: ssrc, name: canonicalName)
    }
}

extension RTCPSenderReport {
    /// The sender's wall-clock time of `timestamp`, as the time since the Unix epoch (1970):
    /// ``ntpTimestamp`` moved by the RTP timestamps' difference, taken the shortest way round
    /// their 2³² wrap, at `clockRate` (90 kHz for H.264).
    public func wallClock(of timestamp: UInt32, clockRate: Int = 90_000) -> Duration {
        let seconds = Int64(ntpTimestamp >> 32) - 2_208_988_800
        let nanoseconds = Int64(((ntpTimestamp & 0xFFFF_FFFF) * 1_000_000_000) >> 32)
        let ticks = Int64(Int32(bitPattern: timestamp &- rtpTimestamp))
        return .seconds(seconds) + .nanoseconds(nanoseconds) + .nanoseconds(ticks * 1_000_000_000 / Int64(max(1, clockRate)))
    }

    /// The middle 32 bits of ``ntpTimestamp``: what a reception report names it by (`LSR`).
    public var compactNTPTimestamp: UInt32 { UInt32(truncatingIfNeeded: ntpTimestamp >> 16) }
}
