import Foundation
import H264
@testable import H264Encoder
import H264SessionCore
import H264TestSupport
import Testing

/// The named presets, as test arguments.
typealias PresetName = EncoderConfiguration.Preset

/// FFprobe's names for the profiles x264 writes (x264 signals Baseline as Constrained Baseline).
func ffprobeName(_ profile: EncoderConfiguration.Profile) -> String {
    switch profile {
    case .baseline: "Constrained Baseline"
    case .main: "Main"
    case .high: "High"
    }
}

@Suite(.ownThread, .timeLimit(.minutes(5)))
struct EncoderSessionTests {
    /// Every preset × profile × input decodes with zero FFmpeg errors, every frame present,
    /// the profile as asked, and PSNR ≥ 32 dB against the source at the recommended bit rate.
    @Test(arguments: PresetName.allCases, [EncoderConfiguration.Profile.baseline, .main, .high])
    func presetProfileInput(preset: PresetName, profile: EncoderConfiguration.Profile) throws {
        for input in InputFormat.allCases {
            var config = preset.configuration
            config.profile = profile
            let frames = try Cars.frames
            try #require(frames.count == Cars.frameCount)
            let output = try encode(frames, width: Cars.width, height: Cars.height, configuration: config, format: input)
            #expect(output.count == frames.count, "\(input)")
            #expect(output.first?.isKeyframe == true)
            #expect(output.first?.formatDescription?.sequenceParameterSets.first?[1] == profile.profileIdc, "\(input)")
            let stream = try annexB(output)
            let decoded = try Tool.decode(stream, width: Cars.width, height: Cars.height)
            #expect(decoded.errors.isEmpty, "\(input): \(decoded.errors)")
            #expect(decoded.frames.count == frames.count, "\(input)")
            let quality = psnr(decoded.frames, frames)
            #expect(quality >= 32, "\(input): PSNR \(quality)")
            #expect(try Tool.profile(stream) == ffprobeName(profile), "\(input)")
            if profile == .baseline || !config.allowFrameReordering {
                #expect(output.allSatisfy { $0.frameType != .b && $0.frameType != .bReference }, "\(input)")
            }
        }
    }

    @Test(arguments: [(EncoderConfiguration.liveCapture, "frames"), (.activeTranscoding, "seconds")])
    func keyframeIntervalRespected(base: EncoderConfiguration, kind: String) throws {
        var config = base
        if kind == "frames" { config.maxKeyFrameInterval = 7 } else { config.maxKeyFrameIntervalDuration = 0.25; config.maxKeyFrameInterval = 50 }
        let limit = kind == "frames" ? 7 : 8 // 0.25 s × 30 fps = 7.5 → 8 frames
        let output = try encode(Cars.frames + Cars.frames.reversed(), width: Cars.width, height: Cars.height, configuration: config)
        let keyframes = output.filter(\.isKeyframe).map(frameIndex).sorted()
        #expect(keyframes.first == 0)
        let gaps = zip(keyframes.dropFirst(), keyframes).map { $0 - $1 }
        #expect(!gaps.isEmpty && gaps.allSatisfy { $0 <= limit }, "IDRs at \(keyframes)")
        #expect(keyframes.last! >= 60 - limit)
    }

    /// ultraLowLatency: frame N's output is out once encode(N) has been handled; no B-frames.
    @Test(arguments: [PresetName.ultraLowLatency, .liveCapture])
    func noFrameDelay(preset: PresetName) throws {
        let collector = Collector<EncodedFrame>()
        let session = try EncoderSession(width: Cars.width, height: Cars.height, configuration: preset.configuration,
                                         outputHandler: collector.handler)
        for (i, bytes) in try Cars.frames.enumerated() {
            try session.encode(makeFrame(bytes, width: Cars.width, height: Cars.height, format: .i420),
                               presentationTimeStamp: .milliseconds(i * 100) / 3)
            session.waitForQueue()
            let all = collector.all
            #expect(all.count == i + 1)
            #expect(all.last.map(frameIndex) == i)
            #expect(all.last?.decodeTimeStamp == all.last?.presentationTimeStamp)
        }
        #expect(collector.all.allSatisfy { $0.frameType != .b && $0.frameType != .bReference })
        session.invalidate()
    }

    @Test func frameReorderingGivesBFramesAndOrderedTimestamps() throws {
        var config = EncoderConfiguration.activeTranscoding
        config.allowFrameReordering = true
        let output = try encode(Cars.frames, width: Cars.width, height: Cars.height, configuration: config)
        #expect(output.count == Cars.frameCount)
        #expect(output.contains { $0.frameType == .b || $0.frameType == .bReference })
        #expect(output.allSatisfy { $0.decodeTimeStamp <= $0.presentationTimeStamp })
        #expect(zip(output.dropFirst(), output).allSatisfy { $0.decodeTimeStamp > $1.decodeTimeStamp })
        // Presentation order is a permutation of the input order.
        #expect(output.map(frameIndex).sorted() == Array(0..<Cars.frameCount))
        #expect(output.map(frameIndex) != Array(0..<Cars.frameCount))
    }

    @Test(arguments: [PresetName.liveCapture, .activeTranscoding])
    func forcedKeyframeLandsOnTheFrame(preset: PresetName) throws {
        var config = preset.configuration
        config.maxKeyFrameInterval = 1000
        config.maxKeyFrameIntervalDuration = nil
        let output = try encode(Cars.frames, width: Cars.width, height: Cars.height, configuration: config, forceKeyframeAt: [17])
        let keyframes = output.filter(\.isKeyframe).map(frameIndex)
        #expect(keyframes.contains(17), "IDRs at \(keyframes)")
        #expect(Set(keyframes).isSubset(of: [0, 17]), "IDRs at \(keyframes)")
        let decoded = try Tool.decode(try annexB(output), width: Cars.width, height: Cars.height)
        #expect(decoded.errors.isEmpty)
        #expect(decoded.frames.count == Cars.frameCount)
    }

    /// 10 s of 640×360 at 30 fps (the cars clip scaled by FFmpeg, looped back and forth).
    @Test func averageBitRateWithinTwentyPercent() throws {
        let source = try Cars.frames640x360
        try #require(source.count == 30)
        var config = EncoderConfiguration.liveCapture
        config.averageBitRate = 800_000
        let frames = (0..<300).map { Cars.pingPong(source, $0) }
        let output = try encode(frames, width: 640, height: 360, configuration: config)
        #expect(output.count == 300)
        let bits = Double(output.reduce(0) { $0 + $1.data.count }) * 8
        let rate = bits / 10
        #expect(abs(rate - 800_000) / 800_000 <= 0.20, "\(rate) bit/s")
    }

    @Test func liveBitRateChangeFollowedWithoutExtraIDR() throws {
        let source = try Cars.frames640x360
        try #require(source.count == 30)
        var config = EncoderConfiguration.liveCapture
        config.averageBitRate = 1_500_000
        config.maxKeyFrameInterval = 1000
        config.maxKeyFrameIntervalDuration = nil
        let collector = Collector<EncodedFrame>()
        let session = try EncoderSession(width: 640, height: 360, configuration: config, outputHandler: collector.handler)
        for i in 0..<300 {
            if i == 150 { try session.setAverageBitRate(500_000) }
            try session.encode(makeFrame(Cars.pingPong(source, i), width: 640, height: 360, format: .i420),
                               presentationTimeStamp: .milliseconds(i * 100) / 3)
        }
        try session.completeFrames()
        let output = collector.all
        #expect(output.count == 300)
        #expect(output.filter(\.isKeyframe).map(frameIndex) == [0])
        func rate(_ range: Range<Int>) -> Double {
            Double(output.filter { range.contains(frameIndex($0)) }.reduce(0) { $0 + $1.data.count }) * 8 * 30 / Double(range.count)
        }
        let before = rate(30..<150), after = rate(200..<300)
        #expect(abs(before - 1_500_000) / 1_500_000 <= 0.25, "before: \(before)")
        #expect(abs(after - 500_000) / 500_000 <= 0.25, "after: \(after)")
        #expect(session.configuration.averageBitRate == 500_000)
    }

    /// A prewarmed switch mid-stream: zero decode errors, the size changes on exactly the
    /// switched frame, which is an IDR with a new format description.
    @Test(arguments: [true, false])
    func prewarmedSwitch(prewarmed: Bool) throws {
        let collector = Collector<EncodedFrame>()
        let session = try EncoderSession(width: 320, height: 240, configuration: .activeTranscoding, outputHandler: collector.handler)
        try session.prepare()
        let small = try Cars.frames.map { frame -> [UInt8] in
            // 2:1 decimation of each plane: 160×120 I420.
            var out: [UInt8] = []
            for (offset, w, h) in [(0, 320, 240), (76_800, 160, 120), (96_000, 160, 120)] {
                for y in stride(from: 0, to: h, by: 2) { for x in stride(from: 0, to: w, by: 2) { out.append(frame[offset + y * w + x]) } }
            }
            return out
        }
        for i in 0..<12 {
            try session.encode(makeFrame(Cars.frames[i], width: 320, height: 240, format: .i420), presentationTimeStamp: .milliseconds(i * 100) / 3)
        }
        if prewarmed {
            try session.prewarm(width: 160, height: 120)
            try session.switchToPrewarmedSession()
        }
        for i in 12..<30 {
            try session.encode(makeFrame(small[i], width: 160, height: 120, format: .nv12), presentationTimeStamp: .milliseconds(i * 100) / 3)
        }
        try session.completeFrames()
        let output = collector.all
        #expect(output.count == 30)
        let switched = output.firstIndex { $0.width == 160 }
        #expect(switched == 12)
        if let switched {
            #expect(output[switched].isKeyframe)
            #expect(frameIndex(output[switched]) == 12)
            #expect(output[switched].formatDescription != output[0].formatDescription)
        }
        let stream = try annexB(output)
        let run = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", "-", "-f", "null", "-"], stdin: stream)
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        let sizes = try Tool.frameSizes(stream)
        #expect(sizes == Array(repeating: "320,240", count: 12) + Array(repeating: "160,120", count: 18))
        #expect(session.size == (160, 120) ? true : false)
    }

    @Test func asyncSequenceYieldsFramesAndFinishes() async throws {
        let session = try EncoderSession(width: Cars.width, height: Cars.height, configuration: .liveCapture)
        let stream = session.frames
        for i in 0..<5 {
            try session.encode(makeFrame(Cars.frames[i], width: Cars.width, height: Cars.height, format: .i420),
                               presentationTimeStamp: .milliseconds(i * 100) / 3)
        }
        try session.completeFrames()
        session.invalidate()
        var count = 0
        for await frame in stream {
            #expect(frameIndex(frame) == count)
            count += 1
        }
        #expect(count == 5)
    }
}
