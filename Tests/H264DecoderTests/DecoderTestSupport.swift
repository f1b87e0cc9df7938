import Foundation
import H264
import H264Decoder
import H264TestSupport

/// One frame as FFmpeg's framemd5 lists it: packed size and MD5.
struct FrameDigest: Hashable, CustomStringConvertible {
    var size: Int
    var md5: String
    var description: String { "\(size) \(md5)" }
}

enum DecoderTestSupport {
    /// FFmpeg's frames of a stream (`ffmpeg -f framemd5`), computed now by the ffmpeg on PATH.
    static func ffmpegFrames(path: String, threads: Int = 1) throws -> [FrameDigest] {
        let output = try Subprocess.run("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-threads", "\(threads)",
                                                         "-i", path, "-fps_mode", "passthrough", "-f", "framemd5", "-"])
        guard output.status == 0 else { throw FixtureMissing(relativePath: path, reason: "ffmpeg failed: \(output.stderr)") }
        return parseFramemd5(String(decoding: output.stdout, as: UTF8.self))
    }

    /// The size and MD5 of each `stream, dts, pts, duration, size, md5` line.
    static func parseFramemd5(_ text: String) -> [FrameDigest] {
        text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count == 6, let size = Int(fields[4]) else { return nil }
            return FrameDigest(size: size, md5: fields[5])
        }
    }

    /// Decodes an Annex-B stream through AccessUnitReceiver and a DecoderSession; returns every
    /// output frame's digest (and the frames' flags), access unit i carrying time i ms.
    static func decode(annexB bytes: [UInt8], configuration: DecoderConfiguration = DecoderConfiguration(threads: .count(1)),
                       keep: Bool = false) throws -> (digests: [FrameDigest], frames: [DecodedFrame], session: DecoderSession) {
        let collected = Locked<([FrameDigest], [DecodedFrame])>(([], []))
        let session = try DecoderSession(configuration: configuration) { frame in
            let digest = FrameDigest(size: frame.packedByteCount, md5: frame.md5())
            collected.withLock {
                $0.0.append(digest)
                if keep { $0.1.append(frame) }
            }
        }
        var receiver = AccessUnitReceiver()
        var index = 0
        for event in receiver.receive(bytes) + receiver.finish() {
            guard case .accessUnit(let unit) = event else { continue }
            try session.decode(unit, presentationTimeStamp: .milliseconds(index), duration: .milliseconds(1))
            index += 1
        }
        try session.waitForAsynchronousFrames()
        let (digests, frames) = collected.withLock { $0 }
        return (digests, frames, session)
    }
}
