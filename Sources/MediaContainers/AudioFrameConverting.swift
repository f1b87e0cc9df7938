public import MediaCore

/// What converts an audio track that a container cannot carry to one it can: G.711 to AAC-LC,
/// for MP4 (no sample entry players accept) and FLV. H264Decoder's `AudioConverter` (libavcodec)
/// is one; this module decodes nothing itself, so a writer that meets such a track is handed a
/// converter by the program (``MP4Recorder/init(_:audioConverter:onEvent:)``).
public protocol AudioFrameConverting: AnyObject {
    /// The format frames are taken in.
    var inputFormat: AudioFormatDescription { get }
    /// The format of the frames handed out.
    var outputFormat: AudioFormatDescription { get }
    /// The frames of ``outputFormat`` that `frame` completes (none while the encoder fills a
    /// frame), timed on the input's timeline.
    ///
    /// - Parameter frame: a frame of ``inputFormat``.
    /// - Returns: the converted frames.
    /// - Throws: what the converter throws for a frame it cannot decode (the next converts as before).
    func convert(_ frame: CompressedFrame) throws(MediaError) -> [CompressedFrame]
}
