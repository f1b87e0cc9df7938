import Foundation
import H264Encoder
import MediaContainers
import MediaCore

/// Where `encode` and `transcode` write the encoder's frames: Annex-B (H264Encoder's
/// `AnnexBWriter`) or length-prefixed samples to a file ('-': standard output), or with
/// `-o FILE.mp4` (`.m4v`, `.mov`) a progressive MP4 (MediaContainers' `MP4Writer`: the index at
/// the front, written by ``finish()``).
///
/// `@unchecked Sendable`: it is reached only inside the command's `Locked` state — by the
/// encoder's output handler, then by the command's thread once the encoder has delivered its
/// last frame.
final class EncodedFileOutput: @unchecked Sendable {
    /// The output's path, for messages.
    let path: String
    private let file: FileHandle?
    private let mp4: MP4Writer?
    private let annexB: AnnexBWriter?
    private var scratch: [UInt8] = []

    /// Opens `path`: MP4 by its extension, else Annex-B (`samples`: the frames' own 4-byte lengths).
    init(path: String, samples: Bool = false) throws {
        self.path = path
        if ConvertCommand.isMP4Name(path) {
            mp4 = try CLIError.named(path) { () throws(MediaError) in try MP4Writer(path: path) }
            (file, annexB) = (nil, nil)
        } else {
            (mp4, file, annexB) = (nil, try CLIIO.openOutput(path), samples ? nil : AnnexBWriter())
        }
    }

    /// Writes one encoded frame.
    ///
    /// - Returns: the bytes written (the frame's, for MP4).
    func write(_ frame: EncodedFrame) throws -> Int {
        if let mp4 {
            do throws(MediaError) { try mp4.append(frame.compressedFrame) } catch { throw CLIError(file: path, error) }
            return frame.data.count
        }
        guard let file else { return 0 }
        if let annexB {
            scratch.removeAll(keepingCapacity: true)
            try annexB.append(frame, to: &scratch)
            try writeAll(file.fileDescriptor, scratch, name: path)
            return scratch.count
        }
        try writeAll(file.fileDescriptor, frame.data, name: path)
        return frame.data.count
    }

    /// Closes the output; an MP4 is written out (its index, then its media).
    func finish() throws {
        if let file, file !== FileHandle.standardOutput { try file.close() }
        if let mp4 { do throws(MediaError) { try mp4.finish() } catch { throw CLIError(file: path, error) } }
    }
}
