import H264
import H264Decoder
import H264Encoder

// Create → encode → invalidate, N times over, then sessions released with frames still queued;
// then N/2 decoder sessions the same ways (create → decode → wait → invalidate, invalidated with
// access units in flight, released with frames still held): run under valgrind by
// Scripts/leakcheck.sh, which fails on any definitely-lost byte.
//
// Usage: H264LeakCheck [cycles]   (default 1000)

let cycles = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1000 : 1000
let width = 64, height = 48
var pixels = [UInt8](repeating: 128, count: width * height * 3 / 2)
for i in 0..<(width * height) { pixels[i] = UInt8(truncatingIfNeeded: i * 7) }

var configuration = EncoderConfiguration.liveCapture
configuration.threads = 1
nonisolated(unsafe) var outputs = 0
final class Counter: @unchecked Sendable { var value = 0 } // written on one session's queue at a time

do {
    let frame = try VideoFrame(pixelFormat: .i420, width: width, height: height, contiguous: pixels)
    for cycle in 0..<cycles {
        let counter = Counter()
        let session = try EncoderSession(width: width, height: height, configuration: configuration,
                                         outputHandler: { _ in counter.value += 1 })
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
            try session.prewarm(width: 32, height: 32)
            for i in 0..<3 { try session.encode(frame, presentationTimeStamp: .milliseconds(40 * i), forceKeyframe: i == 1) }
        }
    }
} catch {
    fatalError("leak check: \(error)")
}
// The decoder: the stream is 3 frames from one more encoder session.
nonisolated(unsafe) var decoded = 0
do {
    let frame = try VideoFrame(pixelFormat: .i420, width: width, height: height, contiguous: pixels)
    final class Frames: @unchecked Sendable { var value: [EncodedFrame] = [] } // one session's queue
    let encodedFrames = Frames()
    let encoder = try EncoderSession(width: width, height: height, configuration: configuration,
                                     outputHandler: { encodedFrames.value.append($0) })
    for i in 0..<3 { try encoder.encode(frame, presentationTimeStamp: .milliseconds(40 * i)) }
    try encoder.completeFrames()
    encoder.invalidate()
    let encoded = encodedFrames.value
    final class Held: @unchecked Sendable { var frames: [DecodedFrame] = [] } // one session's queue
    for cycle in 0..<(cycles / 2) {
        let held = Held()
        let session = try DecoderSession(formatDescription: encoded[0].formatDescription,
                                         configuration: DecoderConfiguration(threads: .count(cycle % 3 == 0 ? 2 : 1)),
                                         outputHandler: { held.frames.append($0) })
        for e in encoded { try session.decode(avcc: e.data, presentationTimeStamp: e.presentationTimeStamp) }
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
} catch {
    fatalError("leak check: \(error)")
}
print("leak check: \(cycles) encoder sessions, \(outputs) frames out of the completed ones; \(cycles / 2) decoder sessions, \(decoded) frames")
