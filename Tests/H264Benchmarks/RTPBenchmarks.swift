import Foundation
import H264
import H264Encoder
import H264TestSupport
import Testing

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
        let times = Bench.interleave(
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
                        frame.data.withUnsafeBytes { memcpy(destination.baseAddress! + offset, $0.baseAddress!, $0.count) }
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

    /// `RTPDepacketizer` over the packets of the 720p stream (1200-byte MTU) into access units
    /// ÷ `memcpy` of the same access units: a throughput ratio (memcpy time ÷ depacketize time).
    /// Each of the ``repeats`` passes reads the same packets (a fresh depacketizer each time), as
    /// the baseline copies the same access units each time: both work on the same amount of
    /// memory.
    @Test func depacketizeVersusMemcpy() throws {
        #expect(frames.count == 30)
        var packetizer = RTPPacketizer(configuration: .init(maximumTransmissionUnit: 1200, ssrc: 1, initialSequenceNumber: 0, initialTimestamp: 0))
        var packets: [[UInt8]] = []
        for frame in frames {
            packets += try packetizer.packets(avcc: frame.data, presentationTime: frame.presentationTimeStamp,
                                              formatDescription: frame.formatDescription)
        }
        let total = totalBytes
        let destination = faultedBuffer(total)
        defer { destination.deallocate() }
        var accessUnits = 0, problems = 0, bytes = 0
        let times = Bench.interleave(
            measure: {
                for _ in 0..<Self.repeats {
                    var depacketizer = RTPDepacketizer()
                    for packet in packets {
                        depacketizer.append(packet: packet)
                        while let event = depacketizer.next() {
                            if case .accessUnit(let unit) = event { accessUnits += 1; bytes += unit.accessUnit.data.count } else { problems += 1 }
                        }
                    }
                    depacketizer.finish()
                    while let event = depacketizer.next() {
                        if case .accessUnit(let unit) = event { accessUnits += 1; bytes += unit.accessUnit.data.count } else { problems += 1 }
                    }
                }
            },
            baseline: {
                for _ in 0..<Self.repeats {
                    var offset = 0
                    for frame in frames {
                        frame.data.withUnsafeBytes { memcpy(destination.baseAddress! + offset, $0.baseAddress!, $0.count) }
                        offset += frame.data.count
                    }
                }
            })
        let passes = Bench.runs + Bench.warmUpRuns
        #expect(problems == 0)
        #expect(accessUnits == passes * Self.repeats * frames.count)
        BenchmarkReport.shared.record(
            "rtp_depacketize_vs_memcpy", times.baseline / times.measure, goal: "≥ 0.5",
            detail: String(format: "depacketize %.3f ms (%.2f GB/s, %.1f ns per packet), memcpy %.3f ms; %d frames 1280x720 × %d, %d packets and %d bytes out each pass",
                           times.measure * 1e3, Double(total * Self.repeats) / times.measure / 1e9,
                           times.measure * 1e9 / Double(packets.count * Self.repeats), times.baseline * 1e3,
                           frames.count, Self.repeats, packets.count, bytes / passes / Self.repeats))
    }
}
}
