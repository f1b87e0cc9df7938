public import MediaCore
/// Reads an FLV file's H.264 or H.265 video and its AAC or G.711 audio: frames
/// (`CompressedFrame`s, with the tags' times) and the format of each video sequence header,
/// from legacy (`CodecID` 7) and Enhanced RTMP (`avc1`, `hvc1`) video tags alike. Its events
/// never fork on the codec or the media: a video format is a `VideoFormatDescription` (its
/// `codec` tells), a frame of either media an ``FLVFrame`` (its `frame.format` tells). An audio
/// frame carries its format (the AAC sequence header in force, ``audioFormat``), so audio
/// sequence headers are no events of their own.
///
/// ```swift
/// var reader = try FLVReader(bytes)                  // throws when there is no FLV header
/// while let event = try reader.next() {              // throws when framing is lost
///     switch event {
///     case .formatChanged(let format):  decoder = makeDecoder(format)
///     case .frame(let frame):           decode(frame.frame)    // video or audio
///     case .endOfSequence:              break
///     case .skippedTag(let error):      log("damaged tag skipped: \(error)")
///     case .warning(let warning):       log(warning)
///     }
/// }
/// ```
///
/// Problems come in three kinds, as everywhere in this library:
/// - fatal, thrown: the data is not FLV (`MediaError.Code.invalidFLVHeader`) or a tag header
///   is not one (`MediaError.Code.flvFramingLost`: unknown tag type, stream id not 0), so where
///   the next tag begins is unknown;
/// - damaged, reported as ``Event/skippedTag(_:)`` and skipped: a video or audio tag whose data
///   does not parse (a bad avcC, hvcC or `AudioSpecificConfig`, NAL unit lengths running past
///   the tag, another codec — MP3, Speex … —, an encrypted tag), coded frames before any
///   sequence header of their codec (no format to decode them with; raw AAC frames before the
///   AAC sequence header too), or a last tag cut short by the end of the file (then reading
///   ends);
/// - tolerable, reported as ``Event/warning(_:)``: a `PreviousTagSize` that does not match the
///   tag before it (FFmpeg does not check it either).
///
/// Script data tags are skipped silently (counted in ``ignoredTagCount``).
///
/// A live stream (HTTP-FLV, a file being written) is read the same way: create the reader with
/// ``init()``, ``append(_:)`` bytes as they arrive and call ``next()`` until it returns `nil`,
/// which then means "more bytes needed"; ``finish()`` marks the end of the input. The events
/// never depend on how the bytes were chunked.
public struct FLVReader: Sendable {
    /// What the reader found, in file order.
    public enum Event: Hashable, Sendable {
        /// A sequence header (of either codec) whose format differs from the one in force (the
        /// first one included): the frames after it are in this format.
        case formatChanged(VideoFormatDescription)
        /// One frame of any codec and either media, in the format in force: a video access unit
        /// (H.264, H.265) or an audio frame (AAC, G.711), told apart by `frame.format`.
        case frame(FLVFrame)
        /// An end-of-sequence tag, with its timestamp in milliseconds.
        case endOfSequence(timestamp: Int64)
        /// A damaged or unsupported video or audio tag (or a cut-off last tag), reported and skipped; the
        /// error's `byteOffset` is in the file.
        case skippedTag(MediaError)
        /// A tolerable irregularity; the error's `byteOffset` is in the file.
        case warning(MediaError)
    }

    /// The file header, once its bytes have been read.
    public private(set) var header: FLVFileHeader?
    /// The format of the video sequence header in force (of either codec); nil before the first.
    public private(set) var format: VideoFormatDescription?
    /// The audio format in force: that of the last AAC sequence header, or of the last G.711
    /// frame when one came after it; nil before the first.
    public private(set) var audioFormat: AudioFormatDescription?
    /// How many script data tags were skipped.
    public private(set) var ignoredTagCount = 0

    /// The format of the last AAC sequence header, which raw AAC frames are in.
    private var aacFormat: AudioFormatDescription?

    /// The bytes not yet consumed begin at `position`; `base` bytes were dropped before `bytes[0]`.
    private var bytes: [UInt8] = []
    private var base = 0
    private var position = 0
    /// True once no more bytes will come (a cut-off tail is then reported, not waited for).
    private var complete = false
    /// True after a fatal error: nothing more is read.
    private var stopped = false
    /// The size of the tag before `position`, which the `PreviousTagSize` there should equal.
    private var previousTagSize = 0
    private var expectingPreviousTagSize = true
    /// Warnings found in the last tag read, handed out by ``next()`` before the next tag is read.
    private var pendingWarnings: [MediaError] = []

    /// Begins reading `bytes`, a whole FLV file (or as much of one as there is).
    ///
    /// - Throws: the errors of ``FLVFileHeader/init(parsing:)``.
    public init(_ bytes: [UInt8]) throws(MediaError) {
        let header = try FLVFileHeader(parsing: bytes)
        self.header = header
        self.bytes = bytes
        position = header.dataOffset
        complete = true
    }

    /// Begins reading a stream whose bytes will be given with ``append(_:)``.
    public init() {}

    /// Adds the next bytes of the stream.
    public mutating func append(_ chunk: some Collection<UInt8>) {
        guard !complete else { return }
        // Drop what was consumed once it is most of the buffer, so a long stream does not grow it.
        if position >= 1 << 16 && position * 2 >= bytes.count {
            bytes.removeSubrange(0..<position)
            base += position
            position = 0
        }
        bytes.append(contentsOf: chunk)
    }

    /// Marks the end of the stream: ``next()`` then reports a cut-off last tag instead of
    /// waiting for its bytes.
    public mutating func finish() {
        complete = true
    }

    /// The next event, or `nil` at the end of the data (or, for a stream not yet finished, when
    /// more bytes are needed).
    ///
    /// - Throws: `MediaError.Code.flvFramingLost` (with the file offset) when a tag header is
    ///   not one, and the errors of ``FLVFileHeader/init(parsing:)`` for a stream; reading then
    ///   ends.
    public mutating func next() throws(MediaError) -> Event? {
        guard !stopped else { return nil }
        if !pendingWarnings.isEmpty { return .warning(pendingWarnings.removeFirst()) }
        if header == nil {
            // A stream: the header is read once its bytes are all there (or the input ended).
            let signature: [UInt8] = [0x46, 0x4C, 0x56]
            let waiting = !complete && bytes.count < FLVFileHeader.size && bytes.prefix(3).elementsEqual(signature.prefix(bytes.count))
            if waiting { return nil }
            do throws(MediaError) {
                let parsed = try FLVFileHeader(parsing: bytes)
                header = parsed
                position = parsed.dataOffset
            } catch {
                if !complete && error.code == .truncated && error.field == "DataOffset" && bytes.count >= FLVFileHeader.size {
                    return nil // DataOffset beyond what has arrived
                }
                stopped = true
                throw error
            }
        }
        while position < bytes.count {
            let remaining = bytes.count - position
            if expectingPreviousTagSize {
                guard remaining >= 4 else {
                    guard complete else { return nil }
                    let at = base + position
                    position = bytes.count
                    expectingPreviousTagSize = false
                    return .warning(MediaError(.truncated, field: "PreviousTagSize", byteOffset: at,
                                              "the file ends inside PreviousTagSize"))
                }
                expectingPreviousTagSize = false
                let value = BigEndian.read(bytes, at: position, count: 4)
                let at = base + position
                position += 4
                if value != previousTagSize {
                    return .warning(MediaError(.flvPreviousTagSizeMismatch, field: "PreviousTagSize", byteOffset: at,
                                              "PreviousTagSize \(value), but the tag before it has \(previousTagSize) bytes"))
                }
                continue
            }
            let tagStart = position
            guard remaining >= FLVTagHeader.size else {
                guard complete else { return nil }
                position = bytes.count
                return .skippedTag(MediaError(.truncated, field: "TagType", byteOffset: base + tagStart,
                                             "the file ends inside a tag header (\(remaining) byte(s))"))
            }
            let tag: FLVTagHeader
            do throws(MediaError) {
                tag = try FLVTagHeader(parsing: bytes[tagStart..<tagStart + FLVTagHeader.size])
            } catch {
                position = bytes.count
                stopped = true
                throw error.offset(by: base + tagStart)
            }
            let dataStart = tagStart + FLVTagHeader.size
            guard tag.dataSize <= bytes.count - dataStart else {
                guard complete else { return nil }
                position = bytes.count
                return .skippedTag(MediaError(.truncated, field: "DataSize", byteOffset: base + tagStart + 1,
                                             "a tag of \(tag.dataSize) data bytes, \(bytes.count - dataStart) left in the file"))
            }
            let dataEnd = dataStart + tag.dataSize
            position = dataEnd
            previousTagSize = FLVTagHeader.size + tag.dataSize
            expectingPreviousTagSize = true
            guard tag.tagType == .video || tag.tagType == .audio else {
                ignoredTagCount += 1
                continue
            }
            guard !tag.filter else {
                return .skippedTag(MediaError(.unsupported, field: "Filter", byteOffset: base + tagStart,
                                             "an encrypted \(tag.tagType == .audio ? "audio" : "video") tag"))
            }
            if tag.tagType == .audio {
                if let event = audio(tag, data: dataStart..<dataEnd, tagStart: tagStart) { return event }
            } else if let event = video(tag, data: dataStart..<dataEnd, tagStart: tagStart) {
                return event
            }
        }
        return nil
    }

    /// Reads the video tag's data: an event, or nil for a sequence header that changes nothing.
    private mutating func video(_ tag: FLVTagHeader, data: Range<Int>, tagStart: Int) -> Event? {
        let video: FLVVideoTag
        do throws(MediaError) {
            video = try FLVVideoTag(parsing: bytes[data])
        } catch {
            return .skippedTag(error.offset(by: base + data.lowerBound))
        }
        switch video.packet {
        case .sequenceHeader(let announced):
            guard announced != format else { return nil }
            format = announced
            return .formatChanged(announced)
        case .endOfSequence:
            return .endOfSequence(timestamp: Int64(tag.timestamp))
        case .codedFrames(let payload, let compositionTime):
            let payloadStart = data.upperBound - payload.count
            guard let format, format.codec == video.codec else {
                return .skippedTag(MediaError(.missingParameterSet, field: "VideoPacketType", byteOffset: base + tagStart,
                                             "coded frames before any \(video.codec == .hevc ? "H.265" : "H.264") sequence header: no format to decode them with"))
            }
            let lengthSize = format.nalUnitLengthSize
            let units: [Range<Int>]
            let annexBInside: Bool
            do throws(MediaError) {
                // Annex-B where lengths belong (some encoders write it into FLV tags) is read by
                // the one rule of AVCC.read, its warning and skipped units reported after the frame.
                let reading = try AVCC.read(payload, lengthSize: lengthSize, allowingEmptyNALUnits: true)
                units = reading.nalUnits
                annexBInside = reading.annexBOffset != nil
                pendingWarnings += (reading.warnings + reading.skipped).map { $0.offset(by: base + payloadStart) }
            } catch {
                return .skippedTag(error.offset(by: base + payloadStart))
            }
            guard !units.isEmpty else {
                return .skippedTag(MediaError(.emptyNALUnit, field: "NALUnitLength", byteOffset: base + payloadStart,
                                             "a coded-frames tag without NAL units"))
            }
            // Already 4-byte AVCC without empty units: keep the bytes as they are.
            let data: [UInt8]
            if lengthSize == 4 && !annexBInside && units.count * 4 + units.reduce(0, { $0 + $1.count }) == payload.count {
                data = payload
            } else {
                // Lengths of 1 or 2 bytes (or empty units) are rewritten; each unit fits 4 bytes.
                data = (try? AVCC.data(nalUnits: units.map { Array(payload[$0]) }, lengthSize: 4)) ?? []
            }
            return .frame(FLVFrame(data: data, format: format, decodeTime: Int64(tag.timestamp), compositionTime: compositionTime,
                                    frameType: video.frameType, syntax: video.syntax, byteOffset: base + tagStart,
                                    byteCount: FLVTagHeader.size + tag.dataSize))
        }
    }

    /// Reads the audio tag's data: a frame, a skipped tag, or nil for an AAC sequence header
    /// (kept as the format of the frames after it).
    private mutating func audio(_ tag: FLVTagHeader, data: Range<Int>, tagStart: Int) -> Event? {
        let audio: FLVAudioTag
        do throws(MediaError) {
            audio = try FLVAudioTag(parsing: bytes[data])
        } catch {
            return .skippedTag(error.offset(by: base + data.lowerBound))
        }
        switch audio.packet {
        case .sequenceHeader(let announced):
            aacFormat = announced
            audioFormat = announced
            return nil
        case .frame(let payload):
            guard let format = audio.impliedFormat ?? aacFormat else {
                return .skippedTag(MediaError(.missingParameterSet, field: "AACPacketType", byteOffset: base + tagStart,
                                             "an AAC frame before any AAC sequence header: no format to decode it with"))
            }
            audioFormat = format
            return .frame(FLVFrame(data: payload, audioFormat: format, timestamp: Int64(tag.timestamp), byteOffset: base + tagStart,
                                   byteCount: FLVTagHeader.size + tag.dataSize))
        }
    }
}

extension FLVReader {
    /// Everything ``FLVReader`` found in a whole file.
    public struct Contents: Hashable, Sendable {
        /// The file header.
        public var header: FLVFileHeader
        /// The frames of both media — video access units (of either codec) and audio frames —
        /// in file order.
        public var frames: [FLVFrame]
        /// The formats of the video sequence headers, in order (each differs from the one before).
        public var formats: [VideoFormatDescription]
        /// How many end-of-sequence tags were read.
        public var endOfSequenceCount: Int
        /// The damaged or unsupported video and audio tags that were skipped.
        public var skippedTags: [MediaError]
        /// The tolerable irregularities.
        public var warnings: [MediaError]
        /// How many script data tags were skipped.
        public var ignoredTagCount: Int
    }

    /// Reads a whole FLV file.
    ///
    /// - Throws: the fatal errors of ``init(_:)`` and ``next()``.
    public static func read(_ bytes: [UInt8]) throws(MediaError) -> Contents {
        var reader = try FLVReader(bytes)
        var contents = Contents(header: reader.header ?? FLVFileHeader(), frames: [], formats: [], endOfSequenceCount: 0,
                                skippedTags: [], warnings: [], ignoredTagCount: 0)
        while let event = try reader.next() {
            switch event {
            case .formatChanged(let format): contents.formats.append(format)
            case .frame(let frame): contents.frames.append(frame)
            case .endOfSequence: contents.endOfSequenceCount += 1
            case .skippedTag(let error): contents.skippedTags.append(error)
            case .warning(let warning): contents.warnings.append(warning)
            }
        }
        contents.ignoredTagCount = reader.ignoredTagCount
        return contents
    }
}
