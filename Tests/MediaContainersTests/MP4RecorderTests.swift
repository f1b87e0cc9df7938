import Foundation
import H264TestSupport
@testable import MediaContainers
import MediaCore
import Testing

/// `MP4Recorder` (issue 36): when a new file begins (segment length, a format change, time
/// stepping back, a reconnection gap), that each file starts at a keyframe with its times from
/// it, that times across a gap stay true in one file, and what happens to G.711 without a
/// converter. The files are read back with `MP4Reader` (FFmpeg reads the CLI's recordings in
/// `ReceiveMP4Tests` and `RecordMP4Tests`).
@Suite struct MP4RecorderTests {
    /// The video formats of two x264 fixtures of different sizes.
    static func formats() throws -> (MediaFormatDescription, MediaFormatDescription) {
        let first = try #require(try MP4Conversion.frames(fromAnnexB: TestFixtures.data("x264/vui_hrd_high_160x96.264"), frameRate: nil).first?.format)
        let second = try #require(try MP4Conversion.frames(fromAnnexB: TestFixtures.data("x264/baseline_level1b_80x44.264"), frameRate: nil).first?.format)
        return (first, second)
    }

    /// Video frame `index` at 25 fps from `start`, a keyframe every `gop` frames.
    static func video(_ index: Int, _ format: MediaFormatDescription, gop: Int = 25, start: Duration = .zero) -> CompressedFrame {
        let time = start + .milliseconds(40 * index)
        return CompressedFrame(data: [0, 0, 0, 2, index % gop == 0 ? 0x65 : 0x41, UInt8(truncatingIfNeeded: index)], format: format,
                               presentationTime: time, decodeTime: time, isKeyframe: index % gop == 0)
    }

    /// Every file's frames as MP4Reader reads them: (video decode times in ms, keyframe flags, audio frame count).
    static func readBack(_ path: String) throws -> (times: [Int64], keyframes: [Bool], audio: Int) {
        var reader = try MP4Reader(source: try MP4FileSource(path: path))
        var times: [Int64] = [], keyframes: [Bool] = [], audio = 0
        while let frame = try reader.next() {
            if frame.frame.videoFormat != nil {
                times.append(frame.frame.decodeTime.components.seconds * 1000 + frame.frame.decodeTime.components.attoseconds / 1_000_000_000_000_000)
                keyframes.append(frame.frame.isKeyframe)
            } else {
                audio += 1
            }
        }
        return (times, keyframes, audio)
    }

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mp4-recorder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func segmentsBeginAtTheFirstKeyframePastTheirDurationEachTimedFromIt() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (format, _) = try Self.formats()
        var events: [MP4Recorder.Event] = []
        var recorder = MP4Recorder(.init(path: directory.path + "/rec-%03d.mp4", segmentDuration: .seconds(2)), onEvent: { events.append($0) })
        // 5 s at 25 fps, a keyframe every 0.6 s: files begin at 2.4 s and 4.8 s.
        for index in 0..<125 { try recorder.write(Self.video(index, format, gop: 15, start: .seconds(7))) }
        try recorder.finish()
        let names = ["rec-001.mp4", "rec-002.mp4", "rec-003.mp4"].map { directory.path + "/" + $0 }
        #expect(recorder.files == names)
        #expect(events.filter { if case .finished = $0 { true } else { false } }.count == 3)
        let files = try names.map(Self.readBack)
        #expect(files.map(\.times.count) == [60, 60, 5])
        #expect(files.allSatisfy { $0.keyframes.first == true && $0.times.first == 0 })
        #expect(files[1].times.last == Int64(59 * 40))
        #expect(recorder.videoFrames == 125)
    }

    @Test func aFormatChangeWithoutSegmentsGoesOnInANumberedFile() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (first, second) = try Self.formats()
        var recorder = MP4Recorder(.init(path: directory.path + "/camera.mp4"))
        for index in 0..<50 { try recorder.write(Self.video(index, first)) }
        for index in 50..<100 { try recorder.write(Self.video(index, second)) }
        try recorder.finish()
        #expect(recorder.files == [directory.path + "/camera.mp4", directory.path + "/camera-2.mp4"])
        let files = try recorder.files.map(Self.readBack)
        #expect(files.map(\.times.count) == [50, 50])
        #expect(files[1].times.first == 0 && files[1].keyframes.first == true)
    }

    @Test func timeSteppingBackBeginsANewFileAtTheNextKeyframe() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (format, _) = try Self.formats()
        var recorder = MP4Recorder(.init(path: directory.path + "/camera.mp4"))
        for index in 0..<40 { try recorder.write(Self.video(index, format)) }
        // The source started again: its frames before the next keyframe (index 25 again) are dropped.
        for index in 20..<60 { try recorder.write(Self.video(index, format, start: .milliseconds(-800))) }
        try recorder.finish()
        let files = try recorder.files.map(Self.readBack)
        #expect(files.map(\.times.count) == [40, 35], "\(files.map(\.times.count))")
        #expect(files[1].keyframes.first == true && files[1].times.first == 0)
    }

    @Test func aReconnectionGapKeepsItsTimeInOneFileAndBeginsASegmentWithSegments() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (format, _) = try Self.formats()
        // 2 s of video, then 5 s of nothing, then 2 s more from a keyframe.
        let frames = (0..<50).map { Self.video($0, format) } + (0..<50).map { Self.video($0, format, start: .seconds(7)) }
        var one = MP4Recorder(.init(path: directory.path + "/one.mp4"))
        for frame in frames { try one.write(frame) }
        try one.finish()
        let single = try Self.readBack(directory.path + "/one.mp4")
        #expect(one.files.count == 1)
        #expect(single.times == frames.map { Int64($0.decodeTime.components.seconds * 1000 + $0.decodeTime.components.attoseconds / 1_000_000_000_000_000) })

        var segmented = MP4Recorder(.init(path: directory.path + "/seg-%02d.mp4", segmentDuration: .seconds(60)))
        for frame in frames { try segmented.write(frame) }
        try segmented.finish()
        #expect(segmented.files == [directory.path + "/seg-01.mp4", directory.path + "/seg-02.mp4"])
        #expect(try segmented.files.map { try Self.readBack($0).times.count } == [50, 50])
    }

    @Test func g711WithoutAConverterIsLeftOutAndSaidOnce() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (format, _) = try Self.formats()
        let audio = AudioFormatDescription(codec: .pcma, sampleRate: 8000, channelCount: 1)
        var events: [MP4Recorder.Event] = []
        var recorder = MP4Recorder(.init(path: directory.path + "/camera.mp4"), onEvent: { events.append($0) })
        for index in 0..<50 {
            try recorder.write(Self.video(index, format))
            try recorder.write(CompressedFrame(data: [UInt8](repeating: 0xd5, count: 320), format: audio, presentationTime: .milliseconds(40 * index)))
        }
        try recorder.finish()
        let leftOut = events.filter { if case .audioLeftOut(.pcma, _) = $0 { true } else { false } }
        #expect(leftOut.count == 1, "\(events)")
        let file = try Self.readBack(directory.path + "/camera.mp4")
        #expect(file.times.count == 50 && file.audio == 0)
    }

    @Test func aacBesideTheVideoIsInTheSameFileFromTheFirstKeyframeOn() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (format, _) = try Self.formats()
        let aac = AudioFormatDescription(codec: .aac, sampleRate: 48_000, channelCount: 2, magicCookie: [0x11, 0x90], samplesPerFrame: 1024)
        var recorder = MP4Recorder(.init(path: directory.path + "/camera.mp4"))
        // Audio from 0 s, video from 0.5 s: the audio before the first keyframe is dropped.
        var audioTime = Duration.zero
        for index in 0..<50 {
            let frame = Self.video(index, format, start: .milliseconds(500))
            while audioTime <= frame.presentationTime {
                try recorder.write(CompressedFrame(data: [0x21, 0x10, 0x04], format: aac, presentationTime: audioTime))
                audioTime += .microseconds(21_333)
            }
            try recorder.write(frame)
        }
        try recorder.finish()
        let file = try Self.readBack(directory.path + "/camera.mp4")
        #expect(file.times.count == 50)
        // Audio from 0.5 s to 2.46 s: 92 frames of 21.333 ms (those at or after the first keyframe, up to the last picture).
        #expect(file.audio == recorder.audioFrames && (90...93).contains(file.audio), "\(file.audio)")
    }

    @Test func patternsNumberTheirFileAndKeepStrftimeFields() {
        #expect(MP4Recorder.path(forPattern: "rec-%03d.mp4", index: 7) == "rec-007.mp4")
        let year = Calendar.current.component(.year, from: Date())
        #expect(MP4Recorder.path(forPattern: "rec-%Y-%02d.mp4", index: 12) == "rec-\(year)-12.mp4")
        // %d alone is strftime's day of the month, not the number.
        #expect(MP4Recorder.path(forPattern: "rec-%d.mp4", index: 3) == String(format: "rec-%02d.mp4", Calendar.current.component(.day, from: Date())))
        #expect(MP4Recorder.numbered("/a.b/camera.mp4", 2) == "/a.b/camera-2.mp4")
        #expect(MP4Recorder.numbered("/a.b/camera", 3) == "/a.b/camera-3")
    }
}
