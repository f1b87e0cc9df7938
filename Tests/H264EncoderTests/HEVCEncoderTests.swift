import Foundation
import H264
import HEVC
import H264Decoder
@testable import H264Encoder
import H264TestSupport
import Testing

/// The libx265 backend of `EncoderSession` (configuration `codec` `.hevc`), shown against FFmpeg
/// (decoding, ffprobe's profile and size) and our own `DecoderSession`, on the 30-frame cars clip.
/// Serialized: each libx265 encoder runs a thread pool of its own on every core; twenty of them at
/// once (the preset × profile table) starved the peer tests running beside them.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(5)))
struct HEVCEncoderTests {
    typealias Profile = EncoderConfiguration.HEVCProfile

    /// The cars clip's frames as 10-bit 4:2:0 (each 8-bit sample × 4, 16-bit little-endian).
    static let frames10 = Result { () throws -> [[UInt8]] in
        try Cars.frames.map { frame in
            var out = [UInt8](repeating: 0, count: frame.count * 2)
            for (i, sample) in frame.enumerated() {
                let value = UInt16(sample) << 2
                out[2 * i] = UInt8(truncatingIfNeeded: value)
                out[2 * i + 1] = UInt8(value >> 8)
            }
            return out
        }
    }

    static func configuration(_ preset: EncoderConfiguration.Preset = .liveCapture, _ profile: Profile = .main) -> EncoderConfiguration {
        var c = preset.configuration
        c.codec = .hevc
        c.hevcProfile = profile
        return c
    }

    /// Encodes `count` frames of the clip (10-bit frames for Main 10) and completes.
    static func encode(_ configuration: EncoderConfiguration, count: Int = Cars.frameCount, forceKeyframeAt: Set<Int> = [],
                       between: ((Int, EncoderSession) throws -> Void)? = nil) throws -> [EncodedFrame] {
        let tenBit = configuration.hevcProfile == .main10
        let source = tenBit ? try frames10.get() : try Cars.frames
        let collector = Collector<EncodedFrame>()
        let session = try EncoderSession(width: Cars.width, height: Cars.height, configuration: configuration,
                                         outputHandler: collector.handler)
        for i in 0..<count {
            try between?(i, session)
            let frame = try VideoFrame(pixelFormat: tenBit ? .yuv420p10 : .i420, width: Cars.width, height: Cars.height,
                                       contiguous: Cars.pingPong(source, i))
            try session.encode(frame, presentationTimeStamp: .milliseconds(i * 100) / 3, duration: .milliseconds(100) / 3,
                               forceKeyframe: forceKeyframeAt.contains(i))
        }
        try session.completeFrames()
        session.invalidate()
        return collector.all
    }

    /// FFmpeg decodes the Annex-B H.265 stream to 8-bit I420: the frames and what it printed.
    static func ffmpegDecode(_ annexB: [UInt8]) throws -> (frames: [[UInt8]], errors: String) {
        let result = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "hevc", "-i", "-",
                                             "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"], stdin: annexB)
        let size = Cars.frameBytes
        let frames = stride(from: 0, to: result.stdout.count - size + 1, by: size).map { Array(result.stdout[$0..<($0 + size)]) }
        return (frames, result.stderr + (result.status == 0 ? "" : " (status \(result.status))"))
    }

    /// The VCL NAL unit types of a frame (its slices).
    static func sliceTypes(_ frame: EncodedFrame) throws -> [UInt8] {
        try frame.nalUnits().map { ($0.first! >> 1) & 0x3F }.filter { $0 < 32 }
    }

    /// Every preset × Main and Main 10: FFmpeg decodes the Annex-B output without a word, every
    /// frame within 32 dB of the input, ffprobe reads the profile and size, our DecoderSession
    /// decodes the HVCC frames to the same count; frames come in decode order with increasing
    /// decode times and every presentation time once.
    @Test(arguments: EncoderConfiguration.Preset.allCases, Profile.allCases)
    func presetDecodesInFFmpegAndOurDecoder(preset: EncoderConfiguration.Preset, profile: Profile) throws {
        let input = try Cars.frames
        let frames = try Self.encode(Self.configuration(preset, profile))
        try #require(frames.count == Cars.frameCount)
        #expect(frames.allSatisfy { $0.format.codec == .hevc && $0.formatDescription == nil })
        #expect(frames.map(frameIndex).sorted() == Array(0..<Cars.frameCount))
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.decodeTimeStamp < $1.decodeTimeStamp })
        #expect(frames.allSatisfy { $0.decodeTimeStamp <= $0.presentationTimeStamp })
        #expect(frames[0].isKeyframe)

        let stream = try annexB(frames)
        let decoded = try Self.ffmpegDecode(stream)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.frames.count == Cars.frameCount)
        let quality = psnr(decoded.frames, input)
        #expect(quality >= 32, "\(preset) \(profile): \(quality) dB")

        let probe = try Tool.run("ffprobe", ["-v", "error", "-f", "hevc", "-select_streams", "v:0", "-show_entries",
                                             "stream=profile,width,height,pix_fmt", "-of", "default=nw=1", "-"], stdin: stream)
        let fields = String(decoding: probe.stdout, as: UTF8.self)
        #expect(fields.contains("profile=\(profile == .main ? "Main" : "Main 10")\n"), "\(fields)")
        #expect(fields.contains("width=320\n") && fields.contains("height=240\n"), "\(fields)")
        #expect(fields.contains("pix_fmt=\(profile == .main ? "yuv420p" : "yuv420p10le")\n"), "\(fields)")

        let ours = Collector<DecodedFrame>()
        let decoder = try DecoderSession(hevcFormatDescription: frames[0].format.hevc, outputHandler: ours.handler)
        for frame in frames {
            try decoder.decode(hvcc: frame.data, presentationTimeStamp: frame.presentationTimeStamp, duration: frame.duration)
        }
        try decoder.waitForAsynchronousFrames()
        decoder.invalidate()
        #expect(ours.count == Cars.frameCount)
        // libavcodec's time base is a microsecond: compare frame numbers.
        #expect(ours.all.map { Int(($0.presentationTimeStamp * 30 / .seconds(1)).rounded()) } == Array(0..<Cars.frameCount))
        #expect(ours.all.allSatisfy { $0.bitDepth == profile.bitDepth && $0.width == Cars.width && $0.height == Cars.height })
    }

    /// A forced keyframe is an IRAP picture exactly where asked, besides the first frame (an IDR):
    /// with x265's open GOP a CRA (`CRA_NUT`, 21), frame type `.i`, keyframe all the same.
    @Test func forcedKeyframeIsAnIDRPicture() throws {
        var configuration = Self.configuration()
        configuration.maxKeyFrameInterval = 1000
        configuration.maxKeyFrameIntervalDuration = nil
        let frames = try Self.encode(configuration, forceKeyframeAt: [11, 23])
        try #require(frames.count == Cars.frameCount)
        #expect(frames.filter(\.isKeyframe).map(frameIndex) == [0, 11, 23])
        for frame in frames where frame.isKeyframe {
            let types = try Self.sliceTypes(frame)
            #expect(types.allSatisfy { (16...23).contains($0) }, "\(frameIndex(frame)): \(types)")
            #expect(frame.frameType == (types.first == 19 || types.first == 20 ? .idr : .i))
        }
        #expect(try Self.sliceTypes(frames[0]).allSatisfy { $0 == 19 || $0 == 20 })
        for frame in frames where !frame.isKeyframe {
            #expect(try Self.sliceTypes(frame).allSatisfy { $0 < 16 }, "\(frameIndex(frame))")
        }
        let decoded = try Self.ffmpegDecode(try annexB(frames))
        #expect(decoded.errors.isEmpty && decoded.frames.count == Cars.frameCount, "\(decoded.errors)")
    }

    /// `maxKeyFrameInterval` 8 with B-frames (x265's default open GOP): a random access point
    /// (IRAP, IDR or CRA) at least every 8 frames, each one a keyframe and no other frame.
    @Test func keyframeIntervalRespected() throws {
        var configuration = Self.configuration(.activeTranscoding)
        configuration.maxKeyFrameInterval = 8
        let frames = try Self.encode(configuration).sorted { $0.presentationTimeStamp < $1.presentationTimeStamp }
        try #require(frames.count == Cars.frameCount)
        let keyframes = frames.filter(\.isKeyframe).map(frameIndex)
        #expect(keyframes.first == 0)
        #expect(zip(keyframes, keyframes.dropFirst() + [Cars.frameCount]).allSatisfy { $1 - $0 <= 8 }, "\(keyframes)")
        for frame in frames {
            let irap = try Self.sliceTypes(frame).allSatisfy { (16...23).contains($0) }
            #expect(irap == frame.isKeyframe, "\(frameIndex(frame))")
        }
    }

    /// A live bit-rate change of an H.265 session takes effect with a new libx265 encoder
    /// (libx265 3.5 does not follow `x265_encoder_reconfig`'s new rate): the next frame is an
    /// IRAP picture, the frames after it are larger (200 kbit/s → 1 Mbit/s), and the stream
    /// decodes in FFmpeg, all 40 frames, without an error.
    @Test func liveBitRateChangeOpensANewEncoder() throws {
        var configuration = Self.configuration()
        configuration.averageBitRate = 2_000_000
        configuration.maxKeyFrameInterval = 1000
        configuration.maxKeyFrameIntervalDuration = nil
        let frames = try Self.encode(configuration, count: 40) { i, session in
            if i == 0 {
                try session.setAverageBitRate(200_000) // before the encoder opens: configures
                #expect(session.configuration.averageBitRate == 200_000)
            }
            if i == 20 {
                try session.setAverageBitRate(1_000_000)
                #expect(session.configuration.averageBitRate == 1_000_000)
            }
        }
        try #require(frames.count == 40)
        #expect(frames.filter(\.isKeyframe).map(frameIndex) == [0, 20])
        let before = frames[5..<20].map(\.data.count).reduce(0, +), after = frames[25..<40].map(\.data.count).reduce(0, +)
        #expect(after > 2 * before, "bytes of frames 5–19: \(before), of 25–39: \(after)")
        let decoded = try Self.ffmpegDecode(try annexB(frames))
        #expect(decoded.errors.isEmpty && decoded.frames.count == 40, "\(decoded.errors)")
    }

    /// The `hvcC` of the session equals the record `HEVCDecoderConfigurationRecord(parameterSets:)`
    /// builds from the VPS, SPS and PPS found in band in the Annex-B output (written before each
    /// keyframe), and each keyframe's parameter sets are those.
    @Test(arguments: Profile.allCases)
    func configurationRecordMatchesTheInBandParameterSets(profile: Profile) throws {
        let frames = try Self.encode(Self.configuration(.liveCapture, profile), count: 4)
        let record = try #require(frames.first?.format.hevc)
        let stream = try annexB(frames)
        var inBand: [[UInt8]] = []
        for nal in ReferenceAnnexB.nalUnits(stream) {
            let unit = Array(stream[nal.range])
            if (32...34).contains((unit[0] >> 1) & 0x3F), !inBand.contains(unit) { inBand.append(unit) }
        }
        #expect(inBand.map { ($0[0] >> 1) & 0x3F } == [32, 33, 34])
        let rebuilt = try HEVCDecoderConfigurationRecord(parameterSets: inBand)
        #expect(rebuilt == record)
        #expect(rebuilt.bytes == frames[0].format.configurationRecordBytes)
        #expect(record.generalProfileIdc == profile.generalProfileIdc)
        #expect(record.bitDepthLumaMinus8 == profile.bitDepth - 8)
        #expect(frames[0].format.dimensions == (320, 240))
        #expect(frames[0].format.parameterSets == record.nalUnits)
    }

    /// A prewarmed switch to 160×120 mid-stream: the first small frame is a keyframe with a new
    /// format of the new size, and FFmpeg decodes the whole stream without a word, in both sizes.
    @Test func prewarmedSizeSwitch() throws {
        let collector = Collector<EncodedFrame>()
        let session = try EncoderSession(width: 320, height: 240, configuration: Self.configuration(), outputHandler: collector.handler)
        for i in 0..<6 {
            try session.encode(try makeFrame(Cars.frames[i], width: 320, height: 240, format: .i420),
                               presentationTimeStamp: .milliseconds(i * 100) / 3)
        }
        try session.prewarm(width: 160, height: 120)
        try session.switchToPrewarmedSession()
        let small = [UInt8](repeating: 100, count: 160 * 120 * 3 / 2)
        for i in 6..<10 {
            try session.encode(try VideoFrame(pixelFormat: .i420, width: 160, height: 120, contiguous: small),
                               presentationTimeStamp: .milliseconds(i * 100) / 3)
        }
        try session.completeFrames()
        session.invalidate()
        let frames = collector.all
        try #require(frames.count == 10)
        #expect(frames[6].isKeyframe && frames[6].format != frames[5].format)
        #expect(frames[6].format.dimensions == (160, 120))
        let probe = try Tool.run("ffprobe", ["-v", "error", "-f", "hevc", "-show_entries", "frame=width,height", "-of", "csv=p=0", "-"],
                                 stdin: try annexB(frames))
        #expect(probe.stderr.isEmpty, "\(probe.stderr)")
        #expect(String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n") == Array(repeating: "320,240", count: 6) + Array(repeating: "160,120", count: 4))
    }

    /// What the H.265 encoder refuses, each naming its property.
    @Test(arguments: ["level", "entropyMode", "tune", "averageBitRate"])
    func invalidConfigurationThrows(field: String) throws {
        func change(_ c: inout EncoderConfiguration) {
            switch field {
            case "level": c.level = .fixed(93)             // H.265's general_level_idc, not 10 × the level
            case "entropyMode": c.entropyMode = .cavlc     // H.265 has CABAC only
            case "tune": c.tune = .film            // no such tune in x265
            default: c.averageBitRate = 10
            }
        }
        var configuration = Self.configuration()
        change(&configuration)
        let error = #expect(throws: MediaError.self) { try EncoderSession(width: 320, height: 240, configuration: configuration) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.field == field)
        let session = try EncoderSession(width: 320, height: 240, configuration: Self.configuration())
        #expect((#expect(throws: MediaError.self) { try session.configure(change) })?.field == field)
    }

    /// A 10-bit frame to the H.264 encoder is refused by the encoding queue, and the next call
    /// says so.
    @Test func tenBitFramesNeedHEVC() throws {
        let session = try EncoderSession(width: 320, height: 240, configuration: .ultraLowLatency)
        let frame = try VideoFrame(pixelFormat: .yuv420p10, width: 320, height: 240, contiguous: try Self.frames10.get()[0])
        try session.encode(frame, presentationTimeStamp: .zero)
        let error = #expect(throws: MediaError.self) { try session.completeFrames() }
        #expect(error?.code == .invalidFrame)
        session.invalidate()
    }

    /// NV12 and BGRA frames go to x265 through libyuv's conversion to I420: the output decodes
    /// close to the I420 input.
    @Test(arguments: [InputFormat.nv12, .bgra])
    func convertedInputFormats(format: InputFormat) throws {
        let input = Array(try Cars.frames.prefix(6))
        let frames = try H264EncoderTests.encode(input, width: Cars.width, height: Cars.height,
                                                 configuration: Self.configuration(), format: format)
        let decoded = try Self.ffmpegDecode(try annexB(frames))
        #expect(decoded.errors.isEmpty && decoded.frames.count == 6, "\(decoded.errors)")
        #expect(psnr(decoded.frames, input) >= 30)
    }

    /// The Annex-B writer's access unit delimiters in H.265: a 2-byte `AUD_NUT` (35) header and
    /// `pic_type`; FFmpeg reads the stream without a word.
    @Test func accessUnitDelimiters() throws {
        let frames = try Self.encode(Self.configuration(), count: 5)
        var writer = AnnexBWriter(accessUnitDelimiters: true)
        var stream: [UInt8] = []
        for frame in frames { try writer.write(frame, to: &stream) }
        let units = ReferenceAnnexB.nalUnits(stream).map { Array(stream[$0.range]) }
        #expect(units.filter { ($0[0] >> 1) & 0x3F == 35 }.count == 5)
        #expect(units.first == [0x46, 0x01, 0x10])
        #expect(writer.parameterSetWriteCount == 1)
        let decoded = try Self.ffmpegDecode(stream)
        #expect(decoded.errors.isEmpty && decoded.frames.count == 5, "\(decoded.errors)")
    }
}
