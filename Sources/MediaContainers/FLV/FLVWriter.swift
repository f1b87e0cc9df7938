public import MediaCore
public import H264
/// Writes an FLV file (FLV specification annex E): the file header, `PreviousTagSize0`, then
/// each tag — its 11-byte header, its data and `PreviousTagSize` (11 + data size).
///
/// ```swift
/// var writer = FLVWriter()                                   // video only, legacy AVC tags
/// try writer.appendSequenceHeader(format)                    // the avcC, at time 0
/// for frame in frames {                                      // in decoding order
///     try writer.appendFrame(frame.avcc, isKeyframe: frame.isIDR,
///                            decodeTime: frame.dtsMilliseconds, presentationTime: frame.ptsMilliseconds)
/// }
/// try writer.appendEndOfSequence(timestamp: lastDTS)
/// // with audio: FLVWriter(header: FLVFileHeader(hasAudio: true)), then
/// // appendAudioSequenceHeader(aacFormat, timestamp: 0) and appendAudioFrame(raw, format:, timestamp:)
/// write(writer.bytes)                                        // or takeBytes() as you go
/// ```
///
/// A failed append leaves the output as it was.
public struct FLVWriter: Sendable {
    /// The bytes written and not yet taken.
    public private(set) var bytes: [UInt8] = []
    /// The syntax of the video tags written: legacy FLV (`CodecID` 7) or Enhanced RTMP (`avc1`).
    public var syntax: FLVVideoTag.Syntax
    /// The size of the last tag written (the next `PreviousTagSize`, already written).
    public private(set) var lastTagSize = 0

    /// Starts a file: writes `header` and `PreviousTagSize0` (0).
    public init(header: FLVFileHeader = FLVFileHeader(), syntax: FLVVideoTag.Syntax = .legacy) {
        self.syntax = syntax
        header.append(to: &bytes)
        BigEndian.append(0, count: 4, to: &bytes)
    }

    /// Appends one video tag at `timestamp` milliseconds (its decoding time), followed by its
    /// `PreviousTagSize`. The tag is written in its own ``FLVVideoTag/syntax``.
    ///
    /// - Parameters:
    ///   - tag: the tag's data.
    ///   - timestamp: the tag's `Timestamp` in milliseconds, 0…2^32−1.
    /// - Throws: `MediaError.Code.valueOutOfRange` for a timestamp outside 0…2^32−1 (field
    ///   `Timestamp`) or data over 16 MiB − 1 (`DataSize`); the errors of
    ///   ``FLVVideoTag/append(to:)``.
    public mutating func append(_ tag: FLVVideoTag, timestamp: Int64) throws(MediaError) {
        try appendTag(.video, timestamp: timestamp) { (output: inout [UInt8]) throws(MediaError) in try tag.append(to: &output) }
    }

    /// Appends a tag of `type` whose data `body` writes, then its `PreviousTagSize`; on error
    /// nothing is left written.
    private mutating func appendTag(_ type: FLVTagHeader.TagType, timestamp: Int64,
                                    _ body: (inout [UInt8]) throws(MediaError) -> Void) throws(MediaError) {
        guard (0...Int64(UInt32.max)).contains(timestamp) else {
            throw MediaError(.valueOutOfRange, field: "Timestamp", "timestamp \(timestamp) ms is outside 0…\(UInt32.max)")
        }
        let start = bytes.count
        do throws(MediaError) {
            bytes.append(contentsOf: repeatElement(0, count: FLVTagHeader.size))
            try body(&bytes)
            let dataSize = bytes.count - start - FLVTagHeader.size
            var header: [UInt8] = []
            header.reserveCapacity(FLVTagHeader.size)
            try FLVTagHeader(tagType: type, dataSize: dataSize, timestamp: UInt32(timestamp)).append(to: &header)
            bytes.replaceSubrange(start..<start + FLVTagHeader.size, with: header)
            lastTagSize = FLVTagHeader.size + dataSize
            BigEndian.append(lastTagSize, count: 4, to: &bytes)
        } catch {
            bytes.removeSubrange(start...)
            throw error
        }
    }

    /// Appends an `onMetaData` script data tag (before the first video tag, at time 0).
    ///
    /// - Throws: as ``append(_:timestamp:)-(FLVVideoTag,_)``.
    public mutating func appendMetadata(_ metadata: FLVMetadata, timestamp: Int64 = 0) throws(MediaError) {
        try appendTag(.scriptData, timestamp: timestamp) { (output: inout [UInt8]) throws(MediaError) in
            output.append(contentsOf: metadata.serialized())
        }
    }

    /// Appends the sequence header of `format` as a keyframe tag: the avcC (in the writer's
    /// ``syntax``), or for H.265 the hvcC in an Enhanced RTMP `hvc1` `SequenceStart`.
    ///
    /// - Throws: as ``append(_:timestamp:)-(FLVVideoTag,_)``.
    public mutating func appendSequenceHeader(_ format: VideoFormatDescription, timestamp: Int64 = 0) throws(MediaError) {
        try append(FLVVideoTag.sequenceHeader(format, syntax: syntax), timestamp: timestamp)
    }

    /// Appends the AVC sequence header (the format's avcC) as a keyframe tag
    /// (the sequence header of `VideoFormatDescription.h264(format)`).
    ///
    /// - Throws: as ``append(_:timestamp:)-(FLVVideoTag,_)``.
    public mutating func appendSequenceHeader(_ format: FormatDescription, timestamp: Int64 = 0) throws(MediaError) {
        try appendSequenceHeader(.h264(format), timestamp: timestamp)
    }

    /// Appends one access unit: `data` holds its NAL units with length prefixes of the size the
    /// sequence header names (4 bytes for the access units of this library and VideoToolbox).
    ///
    /// - Parameters:
    ///   - data: the access unit's length-prefixed NAL units.
    ///   - isKeyframe: true for an IDR picture (`FrameType` 1), false otherwise (2).
    ///   - decodeTime: the decoding time in milliseconds, the tag's timestamp (not negative).
    ///   - presentationTime: the presentation time in milliseconds; `presentationTime −
    ///     decodeTime` is written as the SI24 composition time, negative values included.
    ///   - codec: H.264, or H.265 (an `hvc1` tag, after an H.265 sequence header).
    /// - Throws: `MediaError.Code.valueOutOfRange` when the composition time does not fit SI24
    ///   (field `CompositionTime`) and as ``append(_:timestamp:)-(FLVVideoTag,_)``.
    public mutating func appendFrame(_ data: [UInt8], isKeyframe: Bool, decodeTime: Int64,
                                     presentationTime: Int64, codec: VideoCodec = .h264) throws(MediaError) {
        let (difference, overflow) = presentationTime.subtractingReportingOverflow(decodeTime)
        guard !overflow, let compositionTime = Int32(exactly: difference),
              FLVVideoTag.compositionTimeRange.contains(compositionTime) else {
            throw MediaError(.valueOutOfRange, field: "CompositionTime",
                            "presentation − decoding time (\(presentationTime) − \(decodeTime) ms) does not fit SI24")
        }
        try append(FLVVideoTag(frameType: isKeyframe ? .keyframe : .interFrame,
                               packet: .codedFrames(data: data, compositionTime: compositionTime), syntax: syntax, codec: codec),
                   timestamp: decodeTime)
    }

    /// Appends an end-of-sequence tag (of an H.264 or an H.265 stream).
    ///
    /// - Throws: as ``append(_:timestamp:)-(FLVVideoTag,_)``.
    public mutating func appendEndOfSequence(timestamp: Int64, codec: VideoCodec = .h264) throws(MediaError) {
        try append(FLVVideoTag(frameType: .keyframe, packet: .endOfSequence, syntax: syntax, codec: codec), timestamp: timestamp)
    }

    /// Appends one audio tag at `timestamp` milliseconds, followed by its `PreviousTagSize`.
    ///
    /// - Throws: as ``append(_:timestamp:)``, and the errors of ``FLVAudioTag/append(to:)``.
    public mutating func append(_ tag: FLVAudioTag, timestamp: Int64) throws(MediaError) {
        try appendTag(.audio, timestamp: timestamp) { (output: inout [UInt8]) throws(MediaError) in try tag.append(to: &output) }
    }

    /// Appends the AAC sequence header of `format` (`AF 00` and its `AudioSpecificConfig`, the
    /// format's magic cookie), before the first AAC frame and whenever the format changes.
    ///
    /// - Throws: `MediaError.Code.unsupported` (field `SoundFormat`) for a format that is not
    ///   AAC (G.711 needs no sequence header); the errors of
    ///   ``FLVAudioTag/sequenceHeader(_:)`` and ``append(_:timestamp:)-(FLVAudioTag,_)``.
    public mutating func appendAudioSequenceHeader(_ format: AudioFormatDescription, timestamp: Int64 = 0) throws(MediaError) {
        try append(FLVAudioTag.sequenceHeader(format), timestamp: timestamp)
    }

    /// Appends one audio frame in `format`: a raw AAC frame (`AF 01`, no ADTS header; after an
    /// ``appendAudioSequenceHeader(_:timestamp:)``) or G.711 samples (`SoundFormat` 7 A-law or 8
    /// µ-law, 8 kHz).
    ///
    /// - Parameters:
    ///   - data: the frame: one raw AAC access unit, or G.711 samples.
    ///   - format: its format (AAC, `pcma` or `pcmu`).
    ///   - timestamp: the frame's time in milliseconds, the tag's timestamp.
    /// - Throws: the errors of ``FLVAudioTag/frame(_:format:)`` (Opus, G.711 not at 8 kHz) and
    ///   ``append(_:timestamp:)-(FLVAudioTag,_)``.
    public mutating func appendAudioFrame(_ data: [UInt8], format: AudioFormatDescription, timestamp: Int64) throws(MediaError) {
        try append(FLVAudioTag.frame(data, format: format), timestamp: timestamp)
    }

    /// Returns the bytes written so far and empties ``bytes`` (for writing a file as it grows,
    /// or a live HTTP-FLV stream).
    public mutating func takeBytes() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }
}
