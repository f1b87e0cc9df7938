import H264
import H264Decoder
import H264Encoder
import HEVC
import Foundation
import Logging

// For each codec (x264; with `hevc`, then x265 a tenth as often: each of its lives costs
// ~20× under valgrind): create → encode → invalidate, N times over, then sessions released with
// frames still queued; then N/2 decoder sessions the same ways (create → decode → wait →
// invalidate, invalidated with access units in flight, released with frames still held): run
// under valgrind by Scripts/leakcheck.sh, which fails on any definitely-lost byte.
//
// Before the process ends it waits until every session is gone, with everything its queue
// held: each life's logger has a log handler of its own, which the session, its encoder or
// decoder and its queue's work keep until the last of them is released. A session invalidated
// with work in flight, or released with work queued, is closed on its queue afterwards, and
// until then it still holds its format. Ended early, valgrind reported an H.265 format as lost,
// though it was only still in use: Swift keeps an enum's case in the spare bits of the boxed
// record's pointer, which memcheck does not take for a pointer to the box. (The output handler
// is no such witness: `invalidate()` lets go of it before the queue is done.)
//
// Usage: H264LeakCheck [cycles] [hevc]   (default 1000, H.264 only)

let cycles = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1000 : 1000
let codecs: [(VideoCodec, Int)] = [(.h264, cycles)] + (CommandLine.arguments.dropFirst(2).contains("hevc") ? [(.hevc, max(cycles / 10, 4))] : [])
/// The frame size of `codec`'s sessions (x265 opens no encoder below 64×64) and the prewarmed second size.
func sizes(_ codec: VideoCodec) -> (width: Int, height: Int, prewarm: Int) {
    codec == .hevc ? (128, 96, 64) : (64, 48, 32)
}

/// A 4:2:0 frame of `codec`'s size: a luma ramp on grey.
func frame(_ codec: VideoCodec) throws -> VideoFrame {
    let (width, height, _) = sizes(codec)
    var pixels = [UInt8](repeating: 128, count: width * height * 3 / 2)
    for i in 0..<(width * height) { pixels[i] = UInt8(truncatingIfNeeded: i * 7) }
    return try VideoFrame(pixelFormat: .i420, width: width, height: height, contiguous: pixels)
}

final class Counter: @unchecked Sendable { var value = 0 } // written on one session's queue at a time
final class Frames: @unchecked Sendable { var value: [EncodedFrame] = [] } // one session's queue
final class Held: @unchecked Sendable { var frames: [DecodedFrame] = [] } // one session's queue

/// A log handler that drops every line (at the sessions' default level, `warning`): one per
/// life, released once nothing of its session is left.
final class LifeLogHandler: LogHandler, @unchecked Sendable { // its two vars are set once, before the session exists
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
             file: String, function: String, line: UInt) {}
}

/// The log handler of each life: gone once the session and the jobs still on its queue are.
final class Watched: @unchecked Sendable { // only the main thread reads and writes it
    private var references: [() -> AnyObject?] = []
    /// A logger for one more life, its handler watched.
    func logger() -> Logger {
        let handler = LifeLogHandler()
        references.append { [weak handler] in handler }
        return Logger(label: "H264LeakCheck") { _ in handler }
    }
    /// Polls (every 10 ms, at most 60 s) until every watched object is released; how many remain.
    func waitForRelease() -> Int {
        let deadline = Date().addingTimeInterval(60)
        while true {
            let alive = references.filter { $0() != nil }.count
            if alive == 0 || Date() > deadline { return alive }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}
let watched = Watched()

func configuration(_ codec: VideoCodec) -> EncoderConfiguration {
    var configuration = EncoderConfiguration.liveCapture
    configuration.codec = codec
    configuration.threads = 1
    return configuration
}

/// `count` encoder lives of `codec`; the frames output by the completed ones.
func encoderLives(_ codec: VideoCodec, count: Int) throws -> Int {
    let (width, height, prewarm) = sizes(codec), frame = try frame(codec)
    var outputs = 0
    for cycle in 0..<count {
        let counter = Counter()
        let session = try EncoderSession(width: width, height: height, configuration: configuration(codec),
                                         logger: watched.logger(), outputHandler: { _ in counter.value += 1 })
        switch cycle % 4 {
        case 0, 1:
            // The ordinary life: encode, complete, invalidate.
            for i in 0..<3 { try session.encode(frame, presentationTimeStamp: .milliseconds(40 * i)) }
            try session.completeFrames()
            session.invalidate()
            outputs += counter.value
        case 2:
            // Invalidated with frames in flight.
            for i in 0..<3 { try session.encode(frame, presentationTimeStamp: .milliseconds(40 * i)) }
            session.invalidate()
        default:
            // Prepared, a prewarmed second size, then the last reference dropped with frames queued.
            _ = try session.prepare()
            try session.prewarm(width: prewarm, height: prewarm)
            for i in 0..<3 { try session.encode(frame, presentationTimeStamp: .milliseconds(40 * i), forceKeyframe: i == 1) }
        }
    }
    return outputs
}

/// `count` decoder lives over 3 frames from one more encoder session of `codec`; the frames
/// decoded by the completed ones.
func decoderLives(_ codec: VideoCodec, count: Int) throws -> Int {
    let (width, height, _) = sizes(codec), frame = try frame(codec)
    let encodedFrames = Frames()
    let encoder = try EncoderSession(width: width, height: height, configuration: configuration(codec),
                                     logger: watched.logger(), outputHandler: { encodedFrames.value.append($0) })
    for i in 0..<3 { try encoder.encode(frame, presentationTimeStamp: .milliseconds(40 * i)) }
    try encoder.completeFrames()
    encoder.invalidate()
    let encoded = encodedFrames.value
    var decoded = 0
    for cycle in 0..<count {
        let held = Held()
        let decoding = DecoderConfiguration(threads: .count(cycle % 3 == 0 ? 2 : 1))
        let format = encoded[0].format
        let session = if let record = format.hevc {
            try DecoderSession(hevcFormatDescription: record, configuration: decoding, logger: watched.logger(),
                               outputHandler: { held.frames.append($0) })
        } else {
            try DecoderSession(formatDescription: format.h264, configuration: decoding, logger: watched.logger(),
                               outputHandler: { held.frames.append($0) })
        }
        for e in encoded {
            switch codec {
            case .h264: try session.decode(avcc: e.data, presentationTimeStamp: e.presentationTimeStamp)
            case .hevc: try session.decode(hvcc: e.data, presentationTimeStamp: e.presentationTimeStamp)
            }
        }
        switch cycle % 3 {
        case 0:
            try session.waitForAsynchronousFrames()
            session.invalidate()
            decoded += held.frames.count
        case 1:
            session.invalidate()   // access units in flight
        default:
            break                  // the last reference dropped with access units queued
        }
    }
    return decoded
}

do {
    for (codec, lives) in codecs {
        let outputs = try encoderLives(codec, count: lives)
        let decoded = try decoderLives(codec, count: lives / 2)
        print("leak check (\(codec)): \(lives) encoder sessions, \(outputs) frames out of the completed ones; "
              + "\(lives / 2) decoder sessions, \(decoded) frames")
    }
} catch {
    fatalError("leak check: \(error)")
}
// A session that is never released is a leak in itself.
let alive = watched.waitForRelease()
if alive > 0 { fatalError("leak check: \(alive) sessions still alive 60 s after their last use") }
