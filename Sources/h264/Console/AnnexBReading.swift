import H264
import H264Decoder
import MediaContainers

/// The read loop of `h264 decode` and `h264 transcode`, on the command's own thread: the input
/// in 1 MiB chunks into H264Decoder's `AnnexBDecoder.decode(chunkSize:queueLimit:reading:afterChunk:)`,
/// an error of the output side (`failure`) ending it, and the progress line.
///
/// - Throws: `CLIError` naming the file and offset for a stream whose framing is lost, or the
///   output side's error.
func decodeAnnexB(from source: inout some ByteSource, into decoder: inout AnnexBDecoder, name: String,
                  progress: inout ProgressLine, framesDone: () -> Int, failure: () -> String?) throws {
    do {
        try decoder.decode(reading: { try source.read(into: $0) }) {
            if let error = failure() { throw CLIError(error) }
            progress.update(frames: framesDone)
        }
    } catch let error as MediaError {
        throw CLIError(file: name, error)
    }
}
