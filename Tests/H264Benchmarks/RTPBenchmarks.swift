import Foundation
import H264
import H264Encoder
import H264TestSupport
import Testing
import RTP

/// The 30 frames of ``Frames720p`` encoded once (``benchmarkConfiguration(threads:)``, 1 thread),
/// as the RTP benchmarks' access units.
enum EncodedFrames720p {
    static let frames: [EncodedFrame] = {
        guard let videoFrames = try? Frames720p.videoFrames() else { return [] }
        let collector = Collector<EncodedFrame>(capacity: videoFrames.count)
        guard let session = try? EncoderSession(width: Frames720p.width, height: Frames720p.height,
                                                configuration: benchmarkConfiguration(threads: 1), outputHandler: collector.handler)
        else { return [] }
        for (index, frame) in videoFrames.enumerated() {
            try? session.encode(frame, presentationTimeStamp: .milliseconds(index * 100) / 3)
        }
        try? session.completeFrames()
        session.invalidate()
        return collector.all
    }()
}

extension AllBenchmarks {
@Suite("RTP")
struct RTPBenchmarks {
    /// How many times the 30 frames go through per timed run.
    static let repeats = 20

    let frames = EncodedFrames720p.frames
    var totalBytes: Int { frames.reduce(0) { $0 + $1.data.count } }

    /// `RTPPacketizer` (mode 1, 1200-byte MTU) over the 720p stream with the zero-copy output
    /// (each packet's header and payload slices handed to a closure that sums their sizes) ÷
    /// `memcpy` of the same access units: a throughput ratio (memcpy time ÷ packetize time).
    @Test func packetizeVersusMemcpy() throws {
        #expect(frames.count == 30)
        let configuration = RTPPacketizer.Configuration(maximumTransmissionUnit: 1200, ssrc: 1, initialSequenceNumber: 0, initialTimestamp: 0)
        // Correct first: every packet within the MTU, the stream comes back whole.
        var packetizer = RTPPacketizer(configuration: configuration)
        var packets: [[UInt8]] = []
        for frame in frames {
            packets += try packetizer.packets(avcc: frame.data, presentationTime: frame.presentationTimeStamp,
                                              formatDescription: frame.formatDescription)
        }
        #expect(packets.allSatisfy { $0.count + 28 <= 1200 })
        var depacketizer = RTPDepacketizer()
        var received = 0
        for packet in packets {
            depacketizer.append(packet: packet)
            while let event = depacketizer.next() { if case .accessUnit = event { received += 1 } }
        }
        #expect(received == frames.count)

        let total = totalBytes
        let destination = faultedBuffer(total)
        defer { destination.deallocate() }
        var sink = 0
        var failures = 0
        let times = try Bench.interleave(
            measure: {
                for _ in 0..<Self.repeats {
                    for frame in frames {
                        do {
                            try packetizer.packetize(avcc: frame.data, presentationTime: frame.presentationTimeStamp,
                                                     formatDescription: frame.formatDescription) { sink &+= $0.byteCount }
                        } catch { failures += 1 }
                    }
                }
            },
            baseline: {
                for _ in 0..<Self.repeats {
                    var offset = 0
                    for frame in frames {
                        _ = frame.data.withUnsafeBytes { memcpy(destination.baseAddress! + offset, $0.baseAddress!, $0.count) }
                        offset += frame.data.count
                    }
                }
            })
        #expect(failures == 0 && sink > 0)
        BenchmarkReport.shared.record(
            "rtp_packetize_vs_memcpy", times.baseline / times.measure, goal: "≥ 1.0",
            detail: String(format: "packetize %.3f ms (%.2f GB/s, %.1f ns per packet), memcpy %.3f ms; %d frames 1280x720 × %d, %d packets each pass, 1200-byte MTU",
                           times.measure * 1e3, Double(total * Self.repeats) / times.measure / 1e9,
                           times.measure * 1e9 / Double(packets.count * Self.repeats), times.baseline * 1e3,
                           frames.count, Self.repeats, packets.count))
    }

    /// What a depacketizer handed out. One method per event type rather than a generic one with
    /// a key path: that one copied each access unit and applied the key path generically, costs
    /// of the harness rather than of the depacketizer.
    struct Tally {
        var accessUnits = 0, bytes = 0, problems = 0

        mutating func count(_ event: RTPZeroCopyDepacketizer.Event) {
            if case .accessUnit(let unit) = event { accessUnits += 1; bytes += unit.accessUnit.encodedByteCount } else { problems += 1 }
        }

        mutating func count(_ event: RTPDepacketizer.Event) {
            if case .accessUnit(let unit) = event { accessUnits += 1; bytes += unit.accessUnit.data.count } else { problems += 1 }
        }
    }

    /// The packets of the 720p stream (1200-byte MTU), each in its own array and all in one
    /// buffer (as a `recvmmsg` or a read of RTP over TCP fills one).
    struct ReceivedPackets {
        var packets: [[UInt8]] = []
        var buffer: [UInt8] = []
        var ranges: [Range<Int>] = []

        init(_ frames: [EncodedFrame]) throws {
            var packetizer = RTPPacketizer(configuration: .init(maximumTransmissionUnit: 1200, ssrc: 1, initialSequenceNumber: 0, initialTimestamp: 0))
            for frame in frames {
                packets += try packetizer.packets(avcc: frame.data, presentationTime: frame.presentationTimeStamp,
                                                  formatDescription: frame.formatDescription)
            }
            for packet in packets {
                ranges.append(buffer.count..<(buffer.count + packet.count))
                buffer += packet
            }
        }
    }

    /// `RTPZeroCopyDepacketizer` over the packets of the 720p stream (1200-byte MTU, all in one
    /// receive buffer) into access units ÷ `memcpy` of the same access units: a throughput ratio
    /// (memcpy time ÷ depacketize time), beside the same for `RTPDepacketizer` (one AVCC copy
    /// of each access unit, packets in arrays of their own). Each of the ``repeats`` passes
    /// reads the same packets (a fresh depacketizer each time), as the baseline copies the same
    /// access units each time: both work on the same amount of memory.
    @Test func depacketizeVersusMemcpy() throws {
        #expect(frames.count == 30)
        let received = try ReceivedPackets(frames)
        let total = totalBytes
        let destination = faultedBuffer(total)
        defer { destination.deallocate() }
        let baseline = {
            for _ in 0..<Self.repeats {
                var offset = 0
                for frame in frames {
                    _ = frame.data.withUnsafeBytes { memcpy(destination.baseAddress! + offset, $0.baseAddress!, $0.count) }
                    offset += frame.data.count
                }
            }
        }
        let passes = Bench.runs + Bench.warmUpRuns
        // Correct first: both give every access unit, the same ones.
        var reference = RTPDepacketizer(), twin = RTPZeroCopyDepacketizer()
        var expected: [AccessUnit] = [], seen: [AccessUnit] = []
        for (packet, range) in zip(received.packets, received.ranges) {
            reference.append(packet: packet)
            twin.append(packet: range, in: received.buffer)
            while let event = reference.next() { if case .accessUnit(let unit) = event { expected.append(unit.accessUnit) } }
            while let event = twin.next() { if case .accessUnit(let unit) = event { seen.append(unit.accessUnit.accessUnit) } }
        }
        reference.finish(); twin.finish()
        while let event = reference.next() { if case .accessUnit(let unit) = event { expected.append(unit.accessUnit) } }
        while let event = twin.next() { if case .accessUnit(let unit) = event { seen.append(unit.accessUnit.accessUnit) } }
        #expect(expected.count == frames.count && seen == expected)
        // The packetizer sends SPS and PPS before each IDR: a little more than `total`.
        let bytesOut = expected.reduce(0) { $0 + $1.data.count }

        var views = Tally(), accessUnits = Tally()
        let zeroCopy = try Bench.interleave(
            measure: {
                for _ in 0..<Self.repeats {
                    var depacketizer = RTPZeroCopyDepacketizer()
                    for range in received.ranges {
                        depacketizer.append(packet: range, in: received.buffer)
                        while let event = depacketizer.next() { views.count(event) }
                    }
                    depacketizer.finish()
                    while let event = depacketizer.next() { views.count(event) }
                }
            },
            baseline: baseline)
        let copying = try Bench.interleave(
            measure: {
                for _ in 0..<Self.repeats {
                    var depacketizer = RTPDepacketizer()
                    for packet in received.packets {
                        depacketizer.append(packet: packet)
                        while let event = depacketizer.next() { accessUnits.count(event) }
                    }
                    depacketizer.finish()
                    while let event = depacketizer.next() { accessUnits.count(event) }
                }
            },
            baseline: baseline)
        for tally in [views, accessUnits] {
            #expect(tally.problems == 0)
            #expect(tally.accessUnits == passes * Self.repeats * frames.count)
            #expect(tally.bytes == passes * Self.repeats * bytesOut)
        }

        let packetCount = Double(received.packets.count * Self.repeats)
        BenchmarkReport.shared.record(
            "rtp_depacketize_vs_memcpy", zeroCopy.baseline / zeroCopy.measure, goal: "≥ 0.5",
            detail: String(format: "RTPZeroCopyDepacketizer, packets in one buffer: %.3f ms (%.2f GB/s, %.1f ns per packet), memcpy %.3f ms; %d frames 1280x720 × %d, %d packets each pass",
                           zeroCopy.measure * 1e3, Double(total * Self.repeats) / zeroCopy.measure / 1e9,
                           zeroCopy.measure * 1e9 / packetCount, zeroCopy.baseline * 1e3,
                           frames.count, Self.repeats, received.packets.count))
        BenchmarkReport.shared.record(
            "rtp_depacketize_copying_vs_memcpy", copying.baseline / copying.measure, goal: "—",
            detail: String(format: "RTPDepacketizer (one AVCC copy), a packet per array: %.3f ms (%.2f GB/s, %.1f ns per packet), memcpy %.3f ms",
                           copying.measure * 1e3, Double(total * Self.repeats) / copying.measure / 1e9,
                           copying.measure * 1e9 / packetCount, copying.baseline * 1e3))
    }
}
}
