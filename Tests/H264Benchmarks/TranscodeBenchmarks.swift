import Foundation
import H264
import H264Decoder
import H264Encoder
import H264TestSupport
import Testing

/// A 640×360 Annex-B stream: the cars frames at 360p played forth and back twice (114 frames),
/// encoded by x264 veryfast at 25 fps.
enum Stream360p {
    static let frameCount = 114
    static let annexB = Result { () throws -> [UInt8] in
        let source = try Frames720p.smallVideoFrames()
        let loop = Array(source) + source.dropFirst().dropLast().reversed()
        let sequence = Array((loop + loop).prefix(frameCount))
        let writer = AnnexBWriter()
        let bytes = Locked<[UInt8]>([])
        var configuration = EncoderConfiguration()
        configuration.preset = .veryfast
        configuration.constantRateFactor = 23
        configuration.expectedFrameRate = 25
        let session = try EncoderSession(width: 640, height: 360, configuration: configuration) { frame in
            bytes.withLock { try? writer.append(frame, to: &$0) }
        }
        for (i, frame) in sequence.enumerated() { try session.encode(frame, presentationTimeStamp: .milliseconds(40 * i)) }
        try session.completeFrames()
        session.invalidate()
        return bytes.withLock { $0 }
    }

    /// The encoder settings of both sides: x264 veryfast, CRF 23, High, one thread.
    static var encoderConfiguration: EncoderConfiguration {
        var c = EncoderConfiguration()
        c.preset = .veryfast
        c.constantRateFactor = 23
        c.profile = .high
        c.expectedFrameRate = 25
        c.threads = 1
        return c
    }

    /// Decodes `annexB` and encodes it again in this process (one decoder thread, one x264
    /// thread); returns the frames encoded. The first error of either session — in the
    /// decoder's output handler too — is thrown.
    static func transcode(_ annexB: [UInt8]) throws -> Int {
        struct State { var encoder: EncoderSession?; var encoded = 0; var error: (any Error)? }
        let state = Locked(State())
        let configuration = encoderConfiguration
        let decoder = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1)), outputHandler: { frame in
            do {
                let encoder = try state.withLock { s in
                    if let encoder = s.encoder { return encoder }
                    let encoder = try EncoderSession(width: frame.width, height: frame.height, configuration: configuration) { _ in
                        state.withLock { $0.encoded += 1 }
                    }
                    s.encoder = encoder
                    return encoder
                }
                let picture = try VideoFrame(pixelFormat: .i420, width: frame.width, height: frame.height, contiguous: frame.packedBytes())
                try encoder.waitForQueuedFrames(downTo: 4)
                try encoder.encode(picture, presentationTimeStamp: frame.presentationTimeStamp, duration: frame.duration)
            } catch {
                state.withLock { if $0.error == nil { $0.error = error } }
            }
        })
        var adaptor = AnnexBDecoder(session: decoder, frameDuration: .milliseconds(40))
        var position = 0
        while position < annexB.count {
            let end = min(annexB.count, position + 65_536)
            try decoder.waitForQueuedAccessUnits(downTo: 8)
            try adaptor.append(annexB[position..<end])
            position = end
        }
        try adaptor.finish()
        decoder.invalidate()
        let encoder = state.withLock { $0.encoder }
        try encoder?.completeFrames()
        encoder?.invalidate()
        if let error = state.withLock({ $0.error }) { throw error }
        return state.withLock { $0.encoded }
    }

    /// The process's resident set now, in bytes (`/proc/self/statm`).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }
}

extension AllBenchmarks {
@Suite("Transcode")
struct TranscodeBenchmarks {
    static let sessions = 8

    /// 8 concurrent 360p transcodes in this process (DecoderSession → EncoderSession) against 8
    /// concurrent `ffmpeg -i IN -c:v libx264` processes with the same settings: aggregate frames
    /// per second, ours ÷ FFmpeg's; and the resident memory each in-process session added at its
    /// peak, beside FFmpeg's per-process peak.
    @Test func transcodeEightSessionsVersusFFmpeg() throws {
        let annexB = try Stream360p.annexB.get()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("h264-transcode-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.h264").path
        try Data(annexB).write(to: URL(fileURLWithPath: input))

        // Every frame comes out of each in-process transcode.
        #expect(try Stream360p.transcode(annexB) == Stream360p.frameCount)

        let peak = Locked(0)
        let baseline = Stream360p.residentBytes()
        func ours() throws {
            let done = Locked(false)
            let sampler = Thread {
                while !done.withLock({ $0 }) {
                    let now = Stream360p.residentBytes()
                    peak.withLock { $0 = max($0, now) }
                    usleep(5_000)
                }
            }
            sampler.start()
            let counts = Locked([Result<Int, any Error>]())
            DispatchQueue.concurrentPerform(iterations: Self.sessions) { _ in
                let n = Result { try Stream360p.transcode(annexB) }
                counts.withLock { $0.append(n) }
            }
            done.withLock { $0 = true }
            // Every session's every frame, no more; an error of any is the benchmark's.
            let encoded = try counts.withLock { $0 }.map { try $0.get() }
            try #require(encoded == Array(repeating: Stream360p.frameCount, count: Self.sessions), "frames per session: \(encoded)")
        }
        func ffmpeg() throws {
            let processes = try (0..<Self.sessions).map { i -> Process in
                try Subprocess.launch("ffmpeg", ["-nostdin", "-y", "-loglevel", "error", "-threads", "1", "-i", input,
                                                  "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-profile:v", "high", "-threads", "1",
                                                  "-f", "h264", directory.appendingPathComponent("ffmpeg\(i).h264").path])
            }
            for p in processes { p.waitUntilExit() }
            try #require(processes.allSatisfy { $0.terminationStatus == 0 }, "ffmpeg: \(processes.map(\.terminationStatus))")
        }
        let runs = min(Bench.runs, 3)
        let times = try Bench.interleave(runs: runs, warmUp: 0, measure: ours, baseline: ffmpeg)
        var children = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &children)
        let ffmpegPeakMB = Double(children.ru_maxrss) / 1024   // kilobytes on Linux
        let frames = Double(Self.sessions * Stream360p.frameCount)
        let perSessionMB = Double(max(peak.withLock { $0 } - baseline, 0)) / Double(Self.sessions) / 1_048_576
        BenchmarkReport.shared.record(
            "transcode_8_sessions_vs_ffmpeg", times.baseline / times.measure, goal: "≥ 1.0",
            detail: String(format: "8 × %d frames 640x360 (veryfast, CRF 23, 1 thread each): in-process %.0f fps, 8 ffmpeg processes %.0f fps",
                           Stream360p.frameCount, frames / times.measure, frames / times.baseline))
        BenchmarkReport.shared.record(
            "transcode_memory_per_session_mb", perSessionMB, goal: "report",
            detail: String(format: "peak resident growth of the process ÷ 8 sessions; one ffmpeg process peaks at %.1f MB", ffmpegPeakMB))
    }
}
}
