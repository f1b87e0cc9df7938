public import MediaCore

extension MP4Reader {
    /// An MP4 file's first video track as Annex-B (read through ``MP4AnnexBSource``): every
    /// frame in decoding order, with its format's parameter sets inserted where FFmpeg's `h264_mp4toannexb` / `hevc_mp4toannexb`
    /// insert them (`VideoFormatDescription.annexB(fromSample:lengthSize:withParameterSets:)`):
    /// chosen by the sample's NAL unit types — before an IDR picture (H.264), before the first
    /// IRAP unit of a sample (H.265) — not by the sample's sync flag, so an IDR sample a muxer
    /// left out of `stss` gets them too, as in FFmpeg's output.
    ///
    /// - Parameter source: the file.
    /// - Returns: the bytes, and the reader's warnings (with a `missingParameterSet` when the
    ///   file has no video frames).
    /// - Throws: the errors of ``init(source:)`` and ``next()``.
    public static func annexB(fromMP4 source: some MP4ByteSource) throws(MediaError) -> (bytes: [UInt8], diagnostics: [MediaError]) {
        let reader = try MP4Reader(source: source)
        guard let video = reader.tracks.first(where: { $0.format?.video != nil }) else {
            return ([], reader.warnings + [MediaError(.missingParameterSet, field: "stsd", "no H.264 or H.265 track in the file")])
        }
        var units = MP4AnnexBSource(reader: reader, track: video)
        var output: [UInt8] = []
        while let unit = try units.nextAccessUnit() { output += unit.annexB }
        return (output, units.takeWarnings())
    }
}
