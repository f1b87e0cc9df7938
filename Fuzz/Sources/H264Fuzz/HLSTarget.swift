import H264
import MediaContainers
import MediaCore

/// `HLSPackager` driven by the input (HLSTarget.swift): each 3 bytes a frame — video or audio,
/// keyframe or not, its time step (forward, a jump, or back), a format switch — and after the
/// frames a query and a file name asked of it. Properties: the window is bounded, every part and
/// segment the playlist lists is served, no part is longer than `PART-TARGET` when the video's
/// frames come at one interval shorter than it, the query parse never traps.
extension FuzzTarget {
    /// An 80x44 x264 stream's SPS and PPS (Fixtures/x264/baseline_level1b_80x44.264), and a second
    /// format of the same with another PPS id.
    private static let formats: [MediaFormatDescription] = {
        let sps: [UInt8] = [0x67, 0x42, 0xd0, 0x0b, 0xd9, 0x05, 0x7f, 0xb8, 0x40, 0x00, 0x00, 0x03, 0x00, 0x40, 0x00, 0x00, 0x07, 0xa3, 0xc4, 0x89, 0x92]
        return [[0x68, 0xcb, 0x83, 0xcb, 0x20], [0x68, 0xce, 0x38, 0x80]].compactMap { pps in
            (try? FormatDescription(sequenceParameterSets: [sps], pictureParameterSets: [pps])).map { MediaFormatDescription.video(.h264($0)) }
        }
    }()
    private static let aac = AudioFormatDescription(codec: .aac, sampleRate: 48_000, channelCount: 2,
                                                    magicCookie: [0x11, 0x90], samplesPerFrame: 1024)

    static func hls(_ bytes: [UInt8]) {
        guard formats.count == 2, let control = bytes.first else { return }
        let windowSegments = Int(control & 3) + 1
        var packager = HLSPackager(.init(segmentDuration: .milliseconds(400), partDuration: .milliseconds(100), windowSegments: windowSegments))
        var videoTime = Duration.seconds(100), audioTime = Duration.seconds(100), format = formats[0], intervals: Set<Duration> = []
        var index = 1
        while index + 3 <= bytes.count, bytes[index] != 0xff {
            let kind = bytes[index], step = Int(bytes[index + 1]), size = Int(bytes[index + 2] & 0x3f)
            index += 3
            if kind & 1 == 0 {
                if kind & 0x80 != 0 { format = formats[Int(kind >> 6) & 1] }
                let interval: Duration = kind & 0x10 != 0 ? .milliseconds(step * 40) : .milliseconds(step)
                videoTime = kind & 0x20 != 0 ? videoTime - interval : videoTime + interval
                intervals.insert(kind & 0x20 != 0 ? .zero - interval : interval)
                let keyframe = kind & 2 != 0
                let frame = CompressedFrame(data: [0, 0, 0, UInt8(size + 1), keyframe ? 0x65 : 0x41] + Array(repeating: 0x80, count: size),
                                            format: format, presentationTime: videoTime, decodeTime: videoTime, isKeyframe: keyframe)
                _ = try? packager.append(frame, wallClock: .seconds(1_800_000_000) + videoTime)
            } else {
                audioTime += kind & 0x20 != 0 ? .milliseconds(-step) : .milliseconds(step)
                _ = try? packager.append(CompressedFrame(data: Array(repeating: 0x21, count: size + 1), format: aac, presentationTime: audioTime),
                                         wallClock: .seconds(1_800_000_000) + audioTime)
            }
            check(packager.keptSegmentCount <= windowSegments + 2, "\(packager.keptSegmentCount) segments kept for a window of \(windowSegments)")
        }
        if control & 4 != 0 { try? packager.finish() }
        let rest = String(decoding: bytes[min(index + 1, bytes.count)...], as: UTF8.self)
        let request = HLSPlaylistRequest(query: rest)
        _ = packager.resource(named: rest)
        guard case .playlist(let text) = packager.playlist(for: HLSPlaylistRequest(mediaSequence: nil, part: nil, skip: request.skip)) else { return }
        // Every file the playlist names is served; every part no longer than PART-TARGET at one frame interval shorter than it.
        for line in text.split(separator: "\n") {
            let name: Substring?
            if line.hasPrefix("#EXT-X-PART:") || line.hasPrefix("#EXT-X-MAP:") {
                name = line.split(separator: "\"").dropFirst().first
            } else {
                name = line.hasPrefix("#") ? nil : line
            }
            if let name, !name.isEmpty, case .available = packager.resource(named: String(name)) {} else if let name, !name.isEmpty {
                check(false, "\(name) is listed and not served")
            }
            if line.hasPrefix("#EXT-X-PART:"), intervals.count == 1, let interval = intervals.first, interval > .zero, interval < .milliseconds(100),
               let value = line.split(separator: ",").first?.split(separator: "=").last, let seconds = Double(value) {
                check(seconds <= 0.1, "a part of \(seconds) s")
            }
        }
        _ = packager.playlist(for: request)
    }
}
