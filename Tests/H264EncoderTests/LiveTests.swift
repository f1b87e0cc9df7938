import Foundation
import Testing
import H264
@testable import H264Encoder
import H264TestSupport

/// The live pipeline in the library: an `EncoderSession` sends through an `AnnexBWriter`;
/// `AccessUnitReceiver`s join at several points and through random chunking, and what they
/// hand out decodes in FFmpeg (the reference decoder) without error.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct LiveTests {
    /// A sender's output: the Annex-B stream and where each frame's bytes begin.
    struct Sent {
        var stream: [UInt8] = []
        var frameStarts: [Int] = []
        var frames: [EncodedFrame] = []
        var isKeyframe: [Bool] { frames.map(\.isKeyframe) }
    }

    /// Writes the frames with one stateful writer, recording each frame's offset.
    static func send(_ frames: [EncodedFrame], writer: inout AnnexBWriter, into sent: inout Sent) throws {
        for frame in frames {
            sent.frameStarts.append(sent.stream.count)
            try writer.write(frame, to: &sent.stream)
            sent.frames.append(frame)
        }
    }

    /// The cars clip, ping-pong looped: 1 thread (one slice per picture), keyframes only where
    /// forced (as `h264 serve` forces one for each viewer that joins).
    static func encodeCars(count: Int, forceKeyframeAt: Set<Int>) throws -> [EncodedFrame] {
        var configuration = EncoderConfiguration.liveCapture
        configuration.threads = 1
        configuration.maxKeyFrameInterval = 1000
        configuration.maxKeyFrameIntervalDuration = nil
        let clip = try Cars.frames
        let frames = (0..<count).map { Cars.pingPong(clip, $0) }
        return try encode(frames, width: Cars.width, height: Cars.height, configuration: configuration, forceKeyframeAt: forceKeyframeAt)
    }

    /// What a decoder fed by the receiver sees: each access unit's NAL units (AVCC) back in
    /// Annex-B with 4-byte start codes.
    static func annexB(_ units: [AccessUnit]) throws -> [UInt8] {
        var out: [UInt8] = []
        for unit in units {
            var data = unit.data
            try AnnexBWriter.convertLengthsToStartCodes(&data)
            out += data
        }
        return out
    }

    /// Receivers join at the start, exactly at a forced IDR, inside a P picture, inside an IDR
    /// slice (the SPS/PPS already passed: the next IDR) and at random points, each through its
    /// own random chunking. Each starts at the first IDR after its join point, reports exactly
    /// the bytes it skipped, and its access units are the sender's bytes from there on, which
    /// FFmpeg decodes without error into one picture per access unit.
    @Test(arguments: [false, true])
    func receiversJoiningAnywhereDecode(accessUnitDelimiters: Bool) throws {
        let keyframes: Set<Int> = [17, 33, 41]
        let frames = try Self.encodeCars(count: 60, forceKeyframeAt: keyframes)
        try #require(frames.count == 60)
        #expect(frames.indices.filter { frames[$0].isKeyframe } == [0] + keyframes.sorted())
        var writer = AnnexBWriter(accessUnitDelimiters: accessUnitDelimiters)
        var sent = Sent()
        try Self.send(frames, writer: &writer, into: &sent)
        let starts = sent.frameStarts

        var generator = SplitMix64(seed: accessUnitDelimiters ? 2 : 1)
        var joins = [0, starts[17], starts[9] + 40, starts[17] + (starts[18] - starts[17]) / 2, starts[40] - 1]
        for _ in 0..<3 { joins.append(Int.random(in: 0..<starts[41], using: &generator)) }
        var checked = 0
        for (n, join) in joins.enumerated() {
            // The frame the receiver must start at: the first IDR whose first start code it sees
            // whole (it may see the last 3 bytes `00 00 01` of a 4-byte start code).
            guard let k = frames.indices.first(where: { frames[$0].isKeyframe && starts[$0] + 1 >= join }) else { continue }
            let events = receiveInRandomChunks(sent.stream[join...], maxChunk: [1, 100, 1500, 40_000][n % 4], seed: UInt64(n))
            let units = accessUnits(events)
            let resume = max(0, starts[k] - join)
            let label = "join at \(join) (frame starts \(starts[..<min(starts.count, 20)])…)"
            #expect(units.count == frames.count - k, "\(label)")
            #expect(units.first?.isIDR == true, "\(label)")
            #expect(units.first?.streamOffset == resume, "\(label)")
            if starts[k] > join {
                guard case .skipped(let skip) = events.first else { Issue.record("no skip first: \(label)"); continue }
                #expect(skip.byteCount == resume, "\(label)")
                #expect(skip.resumedAt == resume, "\(label)")
                #expect(skip.reason == .waitingForKeyframe)
                // Whole pictures between the join point and the IDR, plus the partial one.
                let whole = starts.indices.filter { starts[$0] >= join && $0 < k }.count
                #expect((whole...(whole + 1)).contains(skip.accessUnitCount), "\(label): \(skip.accessUnitCount) vs \(whole)")
            } else {
                #expect(events.count == units.count, "\(label)")
            }
            #expect(units.allSatisfy { !$0.formatChanged && $0.formatDescription == frames[0].formatDescription })
            #expect(units.map(\.isIDR) == Array(sent.isKeyframe[k...]))
            let received = try Self.annexB(units)
            #expect(received == Array(sent.stream[starts[k]...]), "\(label)")
            checked += 1
            if n < 4 {
                let decoded = try Tool.decode(received, width: Cars.width, height: Cars.height)
                #expect(decoded.errors.isEmpty, "\(label): \(decoded.errors)")
                #expect(decoded.frames.count == units.count, "\(label)")
            }
        }
        #expect(checked == joins.count)
    }

    /// A prewarmed switch mid-stream from landscape 640×360 to portrait 360×640 (an
    /// orientation change): receivers see a format change on exactly the first portrait
    /// picture, its new format has the new size, and the stream decodes without error.
    @Test func prewarmedOrientationSwitch() throws {
        let landscape = try Cars.frames640x360
        try #require(landscape.count == 30)
        let portrait = try Self.portrait(landscape)
        try #require(portrait.count == 30)
        let collector = Collector<EncodedFrame>()
        var configuration = EncoderConfiguration.liveCapture
        configuration.threads = 1
        let session = try EncoderSession(width: 640, height: 360, configuration: configuration, outputHandler: collector.handler)
        try session.prepare()
        for i in 0..<12 {
            try session.encode(makeFrame(landscape[i], width: 640, height: 360, format: .i420),
                               presentationTimeStamp: .milliseconds(i * 100) / 3)
        }
        try session.prewarm(width: 360, height: 640)
        try session.switchToPrewarmedSession()
        for i in 12..<24 {
            try session.encode(makeFrame(portrait[i], width: 360, height: 640, format: .i420),
                               presentationTimeStamp: .milliseconds(i * 100) / 3)
        }
        try session.completeFrames()
        session.invalidate()
        let frames = collector.all
        try #require(frames.count == 24)

        var writer = AnnexBWriter(accessUnitDelimiters: true)
        var sent = Sent()
        try Self.send(frames, writer: &writer, into: &sent)
        for (seed, maxChunk) in [(1, 1), (2, 777), (3, 100_000)] as [(UInt64, Int)] {
            let units = accessUnits(receiveInRandomChunks(sent.stream[...], maxChunk: maxChunk, seed: seed))
            #expect(units.count == 24)
            #expect(units.indices.filter { units[$0].formatChanged } == [12], "chunks up to \(maxChunk)")
            #expect(units[11].formatDescription.map { "\($0.dimensions.width)x\($0.dimensions.height)" } == "640x360")
            #expect(units[12].formatDescription.map { "\($0.dimensions.width)x\($0.dimensions.height)" } == "360x640")
            #expect(units[12].isIDR)
        }
        let decoded = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "h264", "-i", "-", "-f", "null", "-"], stdin: sent.stream)
        #expect(decoded.stderr.isEmpty, "\(decoded.stderr)")
        #expect(try Tool.frameSizes(sent.stream) == Array(repeating: "640,360", count: 12) + Array(repeating: "360,640", count: 12))
    }

    /// The 640×360 clip rotated by FFmpeg (transpose=1, 90° clockwise) to 360×640.
    static func portrait(_ landscape: [[UInt8]]) throws -> [[UInt8]] {
        let result = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "640x360", "-i", "-",
                                             "-vf", "transpose=1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"],
                                  stdin: landscape.flatMap { $0 })
        let size = 360 * 640 * 3 / 2
        return stride(from: 0, to: result.stdout.count - size + 1, by: size).map { Array(result.stdout[$0..<($0 + size)]) }
    }

    /// A viewer reconnects after the sender's session was invalidated and replaced: the writer,
    /// reset for the new connection, sends SPS and PPS again first, and the new connection's
    /// stream decodes on its own.
    @Test func reconnectAfterInvalidateGetsParameterSets() throws {
        let first = try Self.encodeCars(count: 10, forceKeyframeAt: [])
        var writer = AnnexBWriter()
        var before = Sent()
        try Self.send(first, writer: &writer, into: &before)
        #expect(writer.parameterSetWriteCount == 1)
        // The viewer drops; the session is invalidated (encodeCars did) and a new one starts.
        writer.reset()
        let second = try Self.encodeCars(count: 10, forceKeyframeAt: [])
        var after = Sent()
        try Self.send(second, writer: &writer, into: &after)
        #expect(writer.parameterSetWriteCount == 2)
        let nalTypes = AnnexB.nalUnits(in: after.stream).prefix(3).map { after.stream[$0.range.lowerBound] & 0x1F }
        #expect(nalTypes == [7, 8, 5])
        var receiver = AccessUnitReceiver()
        let units = accessUnits(receiver.receive(after.stream) + receiver.finish())
        #expect(units.count == 10)
        #expect(units.first?.isIDR == true)
        let decoded = try Tool.decode(after.stream, width: Cars.width, height: Cars.height)
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.frames.count == 10)

        // A connection that begins on a P picture still gets the parameter sets first (a
        // decoder then waits for the IDR with them in hand).
        writer.reset()
        var late: [UInt8] = []
        try writer.write(second[3], to: &late)
        let lateTypes = AnnexB.nalUnits(in: late).map { late[$0.range.lowerBound] & 0x1F }
        #expect(lateTypes == [7, 8, 1])
        var again: [UInt8] = []
        try writer.write(second[4], to: &again)
        #expect(AnnexB.nalUnits(in: again).map { again[$0.range.lowerBound] & 0x1F } == [1])
    }
}

/// The writer's bytes on hand-made frames.
@Suite(.ownThread, .timeLimit(.minutes(5)))
struct LiveWriterTests {
    // Hand-made AVCC access unit: one NAL unit (a P slice header byte 41 then 9A).
    static let avcc: [UInt8] = [0, 0, 0, 2, 0x41, 0x9A]
    static let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xAA]
    static let pps: [UInt8] = [0x68, 0xCE, 0x38, 0x80]
    static let format = try! FormatDescription(sequenceParameterSets: [sps], pictureParameterSets: [pps])
    static let otherFormat = try! FormatDescription(sequenceParameterSets: [[0x67, 0x4D, 0x40, 0x1F, 0xBB]], pictureParameterSets: [pps])

    static func frame(_ type: EncodedFrame.FrameType, format: FormatDescription = format) -> EncodedFrame {
        EncodedFrame(data: avcc, presentationTimeStamp: .zero, decodeTimeStamp: .zero, duration: .zero,
                     frameType: type, formatDescription: format, width: 16, height: 16)
    }

    /// Access unit delimiter: NAL header 0x09 (nal_ref_idc 0, type 9), then primary_pic_type
    /// in 3 bits and the RBSP stop bit (clause 7.3.2.4; Table 7-5: 0 = I, 1 = I/P, 2 = I/P/B).
    @Test(arguments: [(EncodedFrame.FrameType.idr, 0x10), (.i, 0x10), (.p, 0x30), (.bReference, 0x50), (.b, 0x50)] as [(EncodedFrame.FrameType, UInt8)])
    func accessUnitDelimiterPerPicture(type: EncodedFrame.FrameType, payload: UInt8) throws {
        let out = try AnnexBWriter(accessUnitDelimiters: true).annexB(Self.frame(type))
        let parameterSets: [UInt8] = type == .idr ? [0, 0, 0, 1] + Self.sps + [0, 0, 0, 1] + Self.pps : []
        #expect(out == [0, 0, 0, 1, 0x09, payload] + parameterSets + [0, 0, 0, 1, 0x41, 0x9A])
        #expect(AnnexBWriter(accessUnitDelimiters: true).annexBByteCount(of: Self.frame(type), parameterSets: type == .idr) == out.count)
    }

    /// The stateful writer: parameter sets before the first frame, every IDR, after reset and
    /// on a format change, and nowhere else.
    @Test func parameterSetsAfterResetAndFormatChange() throws {
        var writer = AnnexBWriter()
        let sequence: [(EncodedFrame, Bool, String)] = [
            (Self.frame(.p), true, "first frame"), (Self.frame(.p), false, "same format"),
            (Self.frame(.idr), true, "IDR"), (Self.frame(.p), false, "after IDR"),
            (Self.frame(.p, format: Self.otherFormat), true, "format change"), (Self.frame(.p, format: Self.otherFormat), false, "same"),
        ]
        for (frame, expectParameterSets, label) in sequence {
            var out: [UInt8] = []
            try writer.write(frame, to: &out)
            #expect((out.count > 10) == expectParameterSets, "\(label)")
        }
        writer.reset()
        #expect(writer.lastSentFormat == nil)
        var out: [UInt8] = []
        try writer.write(Self.frame(.p, format: Self.otherFormat), to: &out)
        #expect(out == [0, 0, 0, 1, 0x67, 0x4D, 0x40, 0x1F, 0xBB, 0, 0, 0, 1] + Self.pps + [0, 0, 0, 1, 0x41, 0x9A])
        #expect(writer.parameterSetWriteCount == 4)
    }

    /// A malformed frame leaves the output as it was.
    @Test func malformedFrameLeavesOutputUnchanged() {
        var writer = AnnexBWriter(accessUnitDelimiters: true)
        var out: [UInt8] = [1, 2, 3]
        let bad = EncodedFrame(data: [0, 0, 0, 9, 0x65], presentationTimeStamp: .zero, decodeTimeStamp: .zero, duration: .zero,
                               frameType: .idr, formatDescription: Self.format, width: 16, height: 16)
        #expect((#expect(throws: MediaError.self) { try writer.write(bad, to: &out) })?.code == .lengthPastEnd)
        #expect(out == [1, 2, 3])
        #expect(writer.lastSentFormat == nil)
    }
}
