import Foundation
import H264
import H264Decoder
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The read loop of `h264 decode` and `h264 transcode`: the input in 1 MiB chunks (as a network
/// stream would arrive) into an `AnnexBDecoder`, at most eight access units queued ahead of
/// libavcodec, an error of the output side ending it, and a progress line on a terminal.
///
/// - Parameters:
///   - source: the Annex-B input.
///   - decoder: the adaptor feeding the session.
///   - session: the decoder session (its queue bounds the read-ahead).
///   - name: the input's name, for errors.
///   - showProgress: write `N frames, F fps` on standard error every 250 ms.
///   - framesDone: how many frames the output side has finished (for the progress line).
///   - failure: the output side's first error, if any (checked after every chunk).
/// - Throws: `CLIError` naming the file and offset for a stream whose framing is lost, or the
///   output side's error.
func decodeAnnexB(from source: inout some ByteSource, into decoder: inout AnnexBDecoder, session: DecoderSession,
                  name: String, showProgress: Bool, framesDone: () -> Int, failure: () -> String?) throws {
    let clock = ContinuousClock()
    let started = clock.now
    var lastProgress = started
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    do {
        while true {
            let count = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
            if count == 0 { break }
            try session.waitForQueuedAccessUnits(downTo: 8)
            try decoder.append(chunk[0..<count])
            if let error = failure() { throw CLIError(error) }
            if showProgress, clock.now - lastProgress > .milliseconds(250) {
                lastProgress = clock.now
                let frames = framesDone()
                let elapsed = (clock.now - started) / .seconds(1)
                FileHandle.standardError.write(Data("\r\(frames) frames, \(EncodeCommand.format(Double(frames) / max(elapsed, 0.001))) fps   ".utf8))
            }
        }
        try decoder.finish()
    } catch let error as H264Error {
        throw CLIError(file: name, error)
    }
}
