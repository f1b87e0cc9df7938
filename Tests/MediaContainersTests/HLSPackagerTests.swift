import H264TestSupport
@testable import MediaContainers
import MediaCore
import Testing

/// `HLSPackager` (issue 37) without a server: where segments and parts are cut, what the
/// playlist says (RFC 8216bis: `EXT-X-PART` ≤ `PART-TARGET`, `EXTINF` ≤ `EXT-X-TARGETDURATION`,
/// the preload hint, `EXT-X-SERVER-CONTROL`), blocking reloads (wait until the part exists,
/// 400 past two segments), delta updates, discontinuities with a new `EXT-X-MAP`, the window,
/// and that every part is a `moof` + `mdat` whose bytes make up its segment. FFmpeg, GStreamer
/// and Chromium read the served stream in H264CLITests' `HLSPeerTests`.
@Suite struct HLSPackagerTests {
    static let aac = AudioFormatDescription(codec: .aac, sampleRate: 48_000, channelCount: 2, magicCookie: [0x11, 0x90], samplesPerFrame: 1024)
    static let wallClock = Duration.seconds(1_796_000_000)

    /// Video frame `index` at 30 fps, a keyframe every `gop` frames.
    static func video(_ index: Int, _ format: MediaFormatDescription, gop: Int = 60, start: Duration = .seconds(10)) -> CompressedFrame {
        let time = start + .nanoseconds(Int64(index) * 1_000_000_000 / 30)
        return CompressedFrame(data: [0, 0, 0, 2, index % gop == 0 ? 0x65 : 0x41, UInt8(truncatingIfNeeded: index)], format: format,
                               presentationTime: time, decodeTime: time, isKeyframe: index % gop == 0)
    }

    /// AAC frame `index` (1024 samples at 48 kHz).
    static func audio(_ index: Int, start: Duration = .seconds(10)) -> CompressedFrame {
        CompressedFrame(data: [0x21, 0x10, UInt8(truncatingIfNeeded: index)], format: aac,
                        presentationTime: start + .nanoseconds(Int64(index) * 1024 * 1_000_000_000 / 48_000))
    }

    /// `seconds` of 30 fps video with its audio, in arrival order, into `packager`.
    static func feed(_ packager: inout HLSPackager, frames: Range<Int>, format: MediaFormatDescription, gop: Int = 60,
                     start: Duration = .seconds(10), audio: Bool = true) throws {
        var nextAudio = Int((Double(frames.lowerBound) / 30 * 48_000 / 1024).rounded(.up))
        for index in frames {
            let frame = video(index, format, gop: gop, start: start)
            while audio, Self.audio(nextAudio, start: start).presentationTime <= frame.decodeTime {
                _ = try packager.append(Self.audio(nextAudio, start: start), wallClock: wallClock + frame.decodeTime)
                nextAudio += 1
            }
            _ = try packager.append(frame, wallClock: wallClock + frame.decodeTime)
        }
    }

    static func playlist(_ packager: HLSPackager, _ query: String = "") throws -> String {
        guard case .playlist(let text) = packager.playlist(for: HLSPlaylistRequest(query: query)) else {
            Issue.record("no playlist for \(query)")
            return ""
        }
        return text
    }

    /// The value of attribute `name` in `line`.
    static func attribute(_ name: String, _ line: Substring) -> String? {
        line.split(separator: ",").lazy.compactMap { item -> String? in
            let pair = item.split(separator: "=", maxSplits: 1)
            let key = pair[0].split(separator: ":").last.map(String.init)
            return key == name && pair.count == 2 ? String(pair[1]).replacingOccurrences(of: "\"", with: "") : nil
        }.first
    }

    static func lines(_ text: String, _ prefix: String) -> [Substring] { text.split(separator: "\n").filter { $0.hasPrefix(prefix) } }

    @Test func partsAreNeverLongerThanThePartTargetAndSegmentsNotLongerThanTheTarget() throws {
        let format = try #require(try MP4RecorderTests.formats().0)
        var packager = HLSPackager()
        try Self.feed(&packager, frames: 0..<300, format: format)  // 10 s
        let text = try Self.playlist(packager)
        let target = try #require(Self.lines(text, "#EXT-X-TARGETDURATION:").first.flatMap { Int($0.split(separator: ":")[1]) })
        let partTarget = try #require(Self.lines(text, "#EXT-X-PART-INF:").first.flatMap { Self.attribute("PART-TARGET", $0) }.flatMap(Double.init))
        #expect(target == 2 && partTarget == 0.2)
        let parts = Self.lines(text, "#EXT-X-PART:").compactMap { Self.attribute("DURATION", $0).flatMap(Double.init) }
        #expect(!parts.isEmpty && parts.allSatisfy { $0 <= partTarget })
        let segments = Self.lines(text, "#EXTINF:").compactMap { Double($0.dropFirst(8).dropLast()) }
        #expect(segments == [2.0, 2.0, 2.0, 2.0])
        #expect(segments.allSatisfy { $0.rounded() <= Double(target) })
        #expect(text.contains("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=0.600,CAN-SKIP-UNTIL=12.000\n"))
        #expect(Self.lines(text, "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=").count == 1)
        #expect(Self.lines(text, "#EXT-X-PROGRAM-DATE-TIME:").first == "#EXT-X-PROGRAM-DATE-TIME:2026-11-30T00:53:30.000Z")
        #expect(text.hasPrefix("#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:2\n"))
    }

    @Test func everyPartIsAMovieFragmentAndTheSegmentIsItsParts() throws {
        let format = try #require(try MP4RecorderTests.formats().0)
        var packager = HLSPackager()
        try Self.feed(&packager, frames: 0..<130, format: format)
        let segment = packager.segments[0]
        #expect(segment.parts.count == 10)  // 2 s of 200 ms parts
        var joined: [UInt8] = []
        for index in segment.parts.indices {
            guard case .available(let part) = packager.resource(named: "part-0-\(index).m4s") else { Issue.record("part \(index)"); return }
            #expect(Array(part.bytes[4..<8]) == Array("moof".utf8))
            joined += part.bytes
        }
        guard case .available(let whole) = packager.resource(named: "seg-0.m4s"), case .available(let initial) = packager.resource(named: "init-0.mp4") else {
            Issue.record("no segment or init")
            return
        }
        #expect(whole.bytes == joined)
        // The init segment and the segment read back as fragmented MP4: 60 video frames and the audio of 2 s.
        var reader = try MP4Reader(source: MP4MemorySource(initial.bytes + whole.bytes))
        var video = 0, audio = 0
        while let frame = try reader.next() { if frame.frame.videoFormat != nil { video += 1 } else { audio += 1 } }
        // The audio from the keyframe to the cut: 93 frames (the one at the keyframe's own time came before it).
        #expect(video == 60 && audio == 93)
        #expect(segment.parts.map(\.isIndependent) == [true] + Array(repeating: false, count: 9))
    }

    @Test func aBlockingReloadWaitsForItsPartAndIsRefusedPastTwoSegments() throws {
        let format = try #require(try MP4RecorderTests.formats().0)
        var packager = HLSPackager(.init(minimumSegments: 1))
        #expect(packager.playlist(for: HLSPlaylistRequest(query: "")) == .wait)  // nothing yet
        try Self.feed(&packager, frames: 0..<30, format: format)
        #expect(packager.playlist(for: HLSPlaylistRequest(query: "")) == .wait)  // parts, and no whole segment yet
        try Self.feed(&packager, frames: 30..<70, format: format)  // segment 0 complete, segment 1 has its first part
        #expect(packager.current?.sequence == 1 && packager.current?.parts.count == 1)
        #expect(packager.playlist(for: HLSPlaylistRequest(query: "_HLS_msn=1&_HLS_part=1")) == .wait)
        #expect(packager.resource(named: "part-1-1.m4s") == .upcoming)
        try Self.feed(&packager, frames: 70..<72, format: format)
        #expect(packager.playlist(for: HLSPlaylistRequest(query: "_HLS_msn=1&_HLS_part=1")) == .wait)
        try Self.feed(&packager, frames: 72..<73, format: format)  // frame 72 (2.4 s) ends part 1
        guard case .playlist(let text) = packager.playlist(for: HLSPlaylistRequest(query: "_HLS_msn=1&_HLS_part=1")) else {
            Issue.record("part 1 of segment 1 is written, and the reload still waits")
            return
        }
        #expect(text.contains("URI=\"part-1-1.m4s\"") && text.contains("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part-1-2.m4s\""))
        #expect(packager.playlist(for: HLSPlaylistRequest(query: "_HLS_msn=3")) == .wait)
        guard case .badRequest = packager.playlist(for: HLSPlaylistRequest(query: "_HLS_msn=4")) else {
            Issue.record("_HLS_msn three segments ahead is not refused")
            return
        }
        guard case .badRequest = packager.playlist(for: HLSPlaylistRequest(query: "_HLS_part=1")) else {
            Issue.record("_HLS_part without _HLS_msn is not refused")
            return
        }
        #expect(HLSPlaylistRequest(query: "_HLS_msn=x1").isMalformed)
        #expect(HLSPlaylistRequest(query: "_HLS_msn=12&_HLS_part=3&_HLS_skip=YES") == HLSPlaylistRequest(mediaSequence: 12, part: 3, skip: true))
    }

    @Test func aDeltaUpdateSkipsTheSegmentsBeforeCanSkipUntil() throws {
        let format = try #require(try MP4RecorderTests.formats().0)
        var packager = HLSPackager()
        try Self.feed(&packager, frames: 0..<(30 * 20), format: format, audio: false)  // 20 s: 9 complete segments
        let full = try Self.playlist(packager), delta = try Self.playlist(packager, "_HLS_skip=YES")
        #expect(Self.lines(full, "#EXTINF:").count == 7 && full.contains("#EXT-X-MEDIA-SEQUENCE:2\n"))
        // Segment 9 has 1.967 s of parts: segment 2 ends 13.967 s before the playlist's end, segment 3 11.967 s.
        #expect(delta.contains("#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n"))
        #expect(Self.lines(delta, "#EXTINF:").count == 6 && !delta.contains("seg-2.m4s") && delta.contains("seg-3.m4s"))
        #expect(Self.lines(delta, "#EXT-X-MAP:").count == 1)
        // The window's files and two more are kept; older ones are gone.
        #expect(packager.segments.map(\.sequence) == Array(0...8))
        try Self.feed(&packager, frames: (30 * 20)..<(30 * 22), format: format, audio: false)
        #expect(packager.resource(named: "seg-0.m4s") == .missing)
        #expect(packager.segments.count == 9)
    }

    @Test func aFormatChangeAndAReconnectionBeginANewMapAfterADiscontinuity() throws {
        let (first, second) = try MP4RecorderTests.formats()
        var packager = HLSPackager()
        try Self.feed(&packager, frames: 0..<120, format: first)
        try Self.feed(&packager, frames: 120..<240, format: second)            // a resolution switch at 4 s
        try Self.feed(&packager, frames: 0..<120, format: second, start: .seconds(3))  // the camera came back, its clock anew
        try packager.finish()
        let text = try Self.playlist(packager)
        #expect(Self.lines(text, "#EXT-X-DISCONTINUITY").count == 2)
        #expect(Self.lines(text, "#EXT-X-MAP:URI=").map { String($0) } == ["#EXT-X-MAP:URI=\"init-0.mp4\"", "#EXT-X-MAP:URI=\"init-1.mp4\"", "#EXT-X-MAP:URI=\"init-2.mp4\""])
        #expect(text.hasSuffix("#EXT-X-ENDLIST\n") && text.contains("#EXT-X-PLAYLIST-TYPE:VOD\n"))
        #expect(!text.contains("#EXT-X-PRELOAD-HINT") && !text.contains("#EXT-X-PART:"))
        // The timeline goes on across both: each init's first fragment starts where the last ended.
        var starts: [Duration] = []
        for (map, sequence) in [(1, 2), (2, 4)] {
            guard case .available(let initial) = packager.resource(named: "init-\(map).mp4"), case .available(let segment) = packager.resource(named: "seg-\(sequence).m4s") else {
                Issue.record("init-\(map) or seg-\(sequence) missing")
                return
            }
            var reader = try MP4Reader(source: MP4MemorySource(initial.bytes + segment.bytes))
            starts.append(try #require(try reader.next()).frame.decodeTime)
        }
        #expect(starts == [.seconds(4), .seconds(8)])
    }

    @Test func audioThatComesLateJoinsAtTheNextKeyframeWithoutLosingVideo() throws {
        let format = try #require(try MP4RecorderTests.formats().0)
        var packager = HLSPackager()
        try Self.feed(&packager, frames: 0..<20, format: format, audio: false)   // the first parts, video only
        try Self.feed(&packager, frames: 20..<130, format: format)               // then the camera's audio
        try packager.finish()
        var video = 0, audio: [Int] = []
        for (map, sequence) in [(0, 0), (1, 1), (1, 2)] {
            guard case .available(let initial) = packager.resource(named: "init-\(map).mp4"),
                  case .available(let segment) = packager.resource(named: "seg-\(sequence).m4s") else { Issue.record("seg-\(sequence)"); return }
            var reader = try MP4Reader(source: MP4MemorySource(initial.bytes + segment.bytes))
            var count = 0
            while let frame = try reader.next() { if frame.frame.videoFormat != nil { video += 1 } else { count += 1 } }
            audio.append(count)
        }
        #expect(video == 130, "every picture kept")
        #expect(audio[0] == 0 && audio[1] > 0 && audio[2] > 0, "\(audio)")
        #expect(Self.lines(try Self.playlist(packager), "#EXT-X-DISCONTINUITY").count == 1)
    }

    /// The fuzz target `hls` found it: at a stream's second frame, and after a discontinuity, no
    /// interval was known yet, and two frames of 90 ms made a part of 180 ms past a 100 ms target.
    @Test func noPartPassesItsTargetAtAStreamsStartOrAfterADiscontinuity() throws {
        let (first, second) = try MP4RecorderTests.formats()
        var packager = HLSPackager(.init(segmentDuration: .milliseconds(400), partDuration: .milliseconds(100)))
        for index in 0..<40 {
            let time = Duration.milliseconds(90 * index)
            let frame = CompressedFrame(data: [0, 0, 0, 2, index % 5 == 0 ? 0x65 : 0x41, 0x80], format: index < 20 ? first : second,
                                        presentationTime: time, decodeTime: time, isKeyframe: index % 5 == 0)
            _ = try packager.append(frame, wallClock: Self.wallClock + time)
        }
        let parts = (packager.segments + [packager.current].compactMap { $0 }).flatMap(\.parts).map(\.duration)
        #expect(parts.count >= 30 && parts.allSatisfy { $0 <= .milliseconds(100) }, "\(parts)")
    }

    @Test func withoutPartsThePlaylistIsPlainHLS() throws {
        let format = try #require(try MP4RecorderTests.formats().0)
        var packager = HLSPackager(.init(partDuration: nil, minimumSegments: 1))
        try Self.feed(&packager, frames: 0..<130, format: format)
        let text = try Self.playlist(packager)
        #expect(!text.contains("#EXT-X-PART") && !text.contains("PRELOAD-HINT") && !text.contains("PART-HOLD-BACK"))
        #expect(Self.lines(text, "#EXTINF:").count == 2)
        #expect(packager.playlist(for: HLSPlaylistRequest(query: "_HLS_msn=2")) == .wait)
    }

    @Test func theFirstPlaylistWaitsForThreeWholeSegments() throws {
        let format = try #require(try MP4RecorderTests.formats().0)
        var packager = HLSPackager()
        try Self.feed(&packager, frames: 0..<150, format: format)  // segments 0 and 1 whole, 2 in parts
        #expect(packager.keptSegmentCount == 2 && packager.playlist(for: HLSPlaylistRequest(query: "")) == .wait)
        try Self.feed(&packager, frames: 150..<181, format: format)  // frame 180 ends segment 2
        #expect(Self.lines(try Self.playlist(packager), "#EXTINF:").count == 3)
    }

    @Test func programDateTimeIsUTC() {
        #expect(HLSPackager.dateTime(.zero) == "1970-01-01T00:00:00.000Z")
        #expect(HLSPackager.dateTime(.milliseconds(951_782_400_123)) == "2000-02-29T00:00:00.123Z")
        #expect(HLSPackager.dateTime(.seconds(4_102_444_799)) == "2099-12-31T23:59:59.000Z")
        #expect(HLSPackager.decimal(.milliseconds(1967)) == "1.967" && HLSPackager.decimal(.nanoseconds(199_999_999)) == "0.200")
    }
}
