import Foundation
import H264
import H264Streaming
import H264TestSupport
import MediaContainers
import Testing

/// `MP4RecorderSink` on a broadcaster: the frames broadcast after it attached are recorded,
/// cut into segments at keyframes, and every file is finalised (its index at the front, on a
/// thread of its own) before the sink's task ends.
@Suite(.ownThread, .timeLimit(.minutes(3))) struct MP4RecorderSinkTests {
    /// The conformance stream's frames, 25 a second, an IDR every 10.
    static func frames(count: Int) -> [LiveFrame] {
        let source = StreamingFixtures.stream.frames
        return (0..<count).map { index in
            var frame = source[index % 10]
            frame.isKeyframe = index % 10 == 0
            frame.presentationTime = .milliseconds(40 * index)
            frame.decodeTime = .milliseconds(40 * index)
            return frame
        }
    }

    /// The types of the top-level boxes of the file at `path`.
    static func topLevelBoxes(_ path: String) throws -> [String] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var types: [String] = [], at = 0
        while at + 8 <= bytes.count {
            let size = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            types.append(String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self))
            guard size >= 8 else { break }
            at += size
        }
        return types
    }

    @Test func segmentsAreFinalisedBeforeTheSinkEnds() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mp4-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broadcaster = Broadcaster(queueLimit: 300)
        let finished = Locked<[String]>([])
        let sink = MP4RecorderSink(.init(path: directory.path + "/seg-%02d.mp4", segmentDuration: .seconds(2)), onEvent: { event in
            if case .finished(let path) = event { finished.withLock { $0.append(path) } }
        })
        let task = broadcaster.attach(sink)
        // 5 s: files begin at 0, 2 and 4 s.
        for frame in Self.frames(count: 125) { broadcaster.broadcast(frame) }
        await broadcaster.closeAll(flushing: true)
        let outcome = try await task.value
        #expect(outcome.skippedFrames == 0)
        let names = (1...3).map { directory.path + String(format: "/seg-%02d.mp4", $0) }
        #expect(sink.summary.files == names && sink.summary.videoFrames == 125)
        #expect(finished.withLock { $0.sorted() } == names)
        for name in names {
            #expect(try Self.topLevelBoxes(name) == ["ftyp", "moov", "mdat"], "\(name)")
            var reader = try MP4Reader(source: try MP4FileSource(path: name))
            var count = 0
            while try reader.next() != nil { count += 1 }
            #expect(count == (name == names[2] ? 25 : 50), "\(name): \(count) frames")
        }
    }
}
