public import MediaCore

/// Reads an MP4 file — progressive (`moov` before or after `mdat`), QuickTime `.mov` of the
/// same codecs, or fragmented (`moov` with `mvex`, then `moof` + `mdat` pairs) — to its tracks
/// and their frames, through one API.
///
/// ```swift
/// var reader = try MP4Reader(source: try MP4FileSource(path: "in.mp4"))  // or MP4Reader(bytes)
/// for track in reader.tracks { print(track.trackID, track.handlerType, track.format as Any) }
/// while let frame = try reader.next() {          // decode order, tracks interleaved by time
///     use(frame.frame)                            // a CompressedFrame
/// }
/// for warning in reader.warnings { log(warning) }
/// ```
///
/// What is read: `ftyp`, `moov` → `mvhd`, `trak` (`tkhd`, `edts`/`elst`, `mdia` → `mdhd`,
/// `hdlr`, `minf` → `stbl` → `stsd`, `stts`, `ctts`, `stss`, `stsc`, `stsz`/`stz2`,
/// `stco`/`co64`), `mvex` → `trex`, and every `moof` (`mfhd`, `traf` → `tfhd`, `tfdt`, `trun`). Only the header of
/// `mdat` (and of any other top-level box) is read; each sample's bytes are read from the
/// source when its frame is asked for, so a file source keeps one sample in memory.
///
/// Times: a frame's decoding time is the `stts` sum (or `tfdt` + `trun` durations), its
/// presentation time that plus the `ctts`/`trun` composition offset, both moved by the edit
/// list in the common case FFmpeg applies (``MP4Track/editShift``: leading empty edits delay
/// the track, the first media edit's `media_time` starts it — for video, at the first picture
/// that presents inside the edit), so a B-frame file's first picture presents at 0 and its
/// first decoding time is negative; an audio track's samples stop where that edit ends (the
/// first sample that reaches its end is the last). Later edits are not applied.
/// Negative composition offsets (`ctts` or `trun` version 1) are handled as FFmpeg 5.1 does: in
/// the sample tables the decoding times move earlier by the most negative offset of `ctts`
/// but its last two entries; in fragments (whose decoding times `tfdt` fixes) the presentation
/// times move later by the most negative offset.
///
/// Frames come in decoding order, tracks interleaved by decoding time (ties: track order).
/// Video samples' NAL units are rewritten to 4-byte lengths when the file uses 1 or 2; Annex-B
/// inside a sample (some muxers write start codes) is detected, converted and reported with an
/// `unexpectedStartCode` warning.
///
/// Problems: a file whose top-level boxes do not frame, or without `moov`, or whose `moov`
/// does not parse, throws; a sample that cannot be read or framed, a track of a coding this
/// reader does not read, sample tables that disagree, a file cut off inside `mdat` are
/// ``warnings`` (the samples concerned are skipped or clamped).
public struct MP4Reader: Sendable {
    /// `ftyp` `major_brand` (`isom`, `mp42`, `qt  ` …); nil without `ftyp`.
    public private(set) var majorBrand: MP4BoxType?
    /// `ftyp` `compatible_brands`.
    public private(set) var compatibleBrands: [MP4BoxType] = []
    /// The tracks, in `moov` order, with their samples.
    public private(set) var tracks: [MP4Track] = []
    /// True when the file has movie fragments (`moof`).
    public private(set) var isFragmented = false
    /// Tolerable problems found so far (the tables at init, samples as frames are read); at
    /// most ``warningLimit`` of the samples' are kept, the rest counted in
    /// ``suppressedWarningCount`` (a damaged file of many tiny samples must not grow the list
    /// without bound).
    public private(set) var warnings: [MediaError] = []
    /// How many warnings about samples were not kept.
    public private(set) var suppressedWarningCount = 0
    /// The most warnings about samples kept in ``warnings``.
    public static let warningLimit = 1000
    private var sampleWarningCount = 0
    /// `mvhd` `timescale`.
    public private(set) var movieTimescale: UInt32 = 0

    private let source: any MP4ByteSource
    /// The next sample of each track.
    private var cursors: [Int]
    /// Tracks whose samples are skipped (no readable format).
    private var skippedTracks: Set<Int> = []

    /// Reads the boxes of a whole file held in memory.
    ///
    /// - Throws: the errors of ``init(source:)``.
    public init(_ bytes: [UInt8]) throws(MediaError) {
        try self.init(source: MP4MemorySource(bytes))
    }

    /// Reads a file's top-level boxes, its `moov` and `moof`s, from `source`.
    ///
    /// - Throws: `mp4BoxSizeInvalid` or `truncated` when the first box does not frame (the data
    ///   is not MP4) or a `moov`/`moof` passes the end of the file; `mp4MissingBox` without
    ///   `moov`; the errors of the `moov`'s boxes.
    public init(source: some MP4ByteSource) throws(MediaError) {
        self.source = source
        cursors = []
        let size = source.count
        var offset = 0
        var moov: MP4Box?
        var moofs: [MP4Box] = []
        while offset < size {
            let head = try source.read(at: offset, count: Swift.min(MP4BoxHeader.maximumLength, size - offset))
            let header: MP4BoxHeader
            do throws(MediaError) {
                header = try MP4BoxHeader(parsing: head, at: offset, containerEnd: size)
            } catch {
                // Past the first box, a header that does not frame ends the file: a cut-off `mdat`
                // or last `moof` (a recording that stopped; the whole fragments before it are
                // read), trailing garbage. A cut-off `moov` leaves nothing to read: thrown.
                guard offset > 0 else { throw error }
                let type = head.count >= 8 ? MP4BoxType(bytes: head.dropFirst(4)) : nil
                guard type != "moov" else { throw error }
                warnings.append(MediaError(.truncated, field: type?.description ?? "size", byteOffset: offset,
                                           "the file ends inside '\(type?.description ?? "a box header")': it is cut off (\(error.message))"))
                break
            }
            switch header.type {
            case "moov", "moof", "ftyp":
                let box = MP4Box(header: header, payload: try source.read(at: header.payloadOffset, count: header.payloadSize))
                if header.type == "moov" { moov = moov ?? box }
                if header.type == "moof" { moofs.append(box) }
                if header.type == "ftyp" { try readFileType(box) }
            default: break
            }
            offset = header.end
        }
        guard let moov else {
            throw MediaError(.mp4MissingBox, field: "moov", byteOffset: 0, "no 'moov' box in the file")
        }
        try readMovie(moov, fileSize: size)
        var trackIndex: [UInt32: Int] = [:]
        for (index, track) in tracks.enumerated() { trackIndex[track.trackID] = trackIndex[track.trackID] ?? index }
        var defaults: [UInt32: MP4TrackExtends] = [:]
        if let mvex = try moov.child("mvex") {
            for trex in try mvex.children() where trex.type == "trex" {
                let value = try MP4TrackExtends(trex)
                defaults[value.trackID] = value
            }
        }
        isFragmented = !moofs.isEmpty
        var nextDecodeTime: [UInt32: Int64] = [:]
        for track in tracks { nextDecodeTime[track.trackID] = track.samples.last.map { $0.decodeTime } ?? 0 }
        let tableSampleCounts = tracks.map(\.samples.count)
        for moof in moofs {
            try MP4Fragment.read(moof, into: &tracks, trackIndex: trackIndex, defaults: defaults, nextDecodeTime: &nextDecodeTime,
                                 fileSize: size, warnings: &warnings)
        }
        // Negative `trun` composition offsets: the fragments' decoding times (from `tfdt`) stay,
        // their presentation times move later by the most negative offset (FFmpeg's `dts_shift`
        // applied to fragments).
        for (index, count) in tableSampleCounts.enumerated() {
            let fragmentSamples = tracks[index].samples.indices.dropFirst(count)
            let shift = -(tracks[index].samples[fragmentSamples].map(\.compositionOffset).min() ?? 0)
            guard shift > 0 else { continue }
            for sample in fragmentSamples { tracks[index].samples[sample].compositionOffset &+= shift }
        }
        cursors = Array(repeating: 0, count: tracks.count)
        for (index, track) in tracks.enumerated() where track.sampleEntries.allSatisfy({ $0.format == nil }) {
            skippedTracks.insert(index)
            if !track.samples.isEmpty {
                let entries = track.sampleEntries.map { "'\($0.type)'" }.joined(separator: ", ")
                warnings.append(MediaError(.unsupported, field: "stsd", byteOffset: nil,
                                           "track \(track.trackID) (\(track.handlerType)): sample entry \(entries.isEmpty ? "none" : entries) not read; its \(track.samples.count) samples are skipped"))
            }
        }
    }

    /// True when `bytes` begin like an MP4 or QuickTime file: a first box of a type such files
    /// begin with (`ftyp`, `moov`, `mdat`, `free`, `skip`, `wide`, `junk`, `pnot`, `udta`, and
    /// the segment boxes `styp`, `sidx`, `moof` that FFmpeg's mov demuxer also reads as MP4 —
    /// a media segment without its init segment is then an MP4 without `moov`, not Annex-B).
    public static func isMP4(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 8 else { return false }
        let known: Set<MP4BoxType> = ["ftyp", "moov", "mdat", "free", "skip", "wide", "junk", "pnot", "udta", "styp", "sidx", "moof"]
        return known.contains(MP4BoxType(bytes: bytes[4..<8]))
    }

    private mutating func readFileType(_ ftyp: MP4Box) throws(MediaError) {
        var cursor = ftyp.cursor
        majorBrand = MP4BoxType(bytes: try cursor.readBytes(4, "major_brand"))
        try cursor.skip(4, "minor_version")
        compatibleBrands = []
        while cursor.remaining >= 4 { compatibleBrands.append(MP4BoxType(bytes: try cursor.readBytes(4, "compatible_brands"))) }
    }

    private mutating func readMovie(_ moov: MP4Box, fileSize: Int) throws(MediaError) {
        let children = try moov.children()
        if let mvhd = children.first(where: { $0.type == "mvhd" }) {
            var cursor = mvhd.cursor
            let (version, _) = try cursor.readVersionAndFlags("mvhd")
            try cursor.skip(version == 1 ? 16 : 8, "creation_time")
            movieTimescale = try cursor.readUInt32("timescale")
        }
        for trak in children where trak.type == "trak" {
            tracks.append(try MP4Track(trak, movieTimescale: movieTimescale, fileSize: fileSize, warnings: &warnings))
        }
    }

    /// The next frame in decoding order across the tracks, or nil after the last. A sample that
    /// cannot be read or framed is skipped with a warning (in ``warnings``).
    ///
    /// - Throws: never for a damaged sample; only the source's read errors for a sample inside
    ///   the file (a file that shrank, a failing disk).
    public mutating func next() throws(MediaError) -> MP4Frame? {
        while true {
            var best: Int?
            var bestTime = Duration.zero
            for (index, track) in tracks.enumerated() where !skippedTracks.contains(index) && cursors[index] < track.samples.count {
                let time = track.duration(ofTicks: track.samples[cursors[index]].decodeTime &+ track.editShift)
                if best == nil || time < bestTime { best = index; bestTime = time }
            }
            guard let index = best else { return nil }
            let track = tracks[index]
            let sample = track.samples[cursors[index]]
            cursors[index] += 1
            guard let format = track.format(ofEntry: sample.descriptionIndex) else {
                warn(MediaError(.mp4SampleTableInconsistent, field: "sample_description_index", byteOffset: sample.offset,
                                           "a sample of track \(track.trackID) names entry \(sample.descriptionIndex), which is absent or not read; skipped"))
                continue
            }
            let bytes = Array(try source.read(at: sample.offset, count: sample.size))
            let decode = sample.decodeTime &+ track.editShift
            let presentation = decode &+ sample.compositionOffset
            let frame: CompressedFrame
            switch format {
            case .video(let video):
                guard let data = videoData(bytes, lengthSize: video.nalUnitLengthSize, at: sample.offset, track: track.trackID) else { continue }
                frame = CompressedFrame(data: data, format: video, presentationTime: track.duration(ofTicks: presentation),
                                        decodeTime: track.duration(ofTicks: decode), isKeyframe: sample.isSync)
            case .audio(let audio):
                frame = CompressedFrame(data: bytes, format: .audio(audio), presentationTime: track.duration(ofTicks: presentation),
                                        decodeTime: track.duration(ofTicks: decode), isKeyframe: true)
            }
            return MP4Frame(frame: frame, trackID: track.trackID, decodeTimestamp: decode, presentationTimestamp: presentation,
                            timescale: track.timescale, byteOffset: sample.offset, byteCount: sample.size)
        }
    }

    /// Hands the warnings found so far to the caller and forgets them.
    public mutating func takeWarnings() -> [MediaError] {
        defer { warnings = [] }
        return warnings
    }

    /// A video sample's NAL units after 4-byte lengths, or nil (with a warning) when it has none
    /// or its lengths lose the framing.
    private mutating func videoData(_ bytes: [UInt8], lengthSize: Int, at offset: Int, track: UInt32) -> [UInt8]? {
        do throws(MediaError) {
            let reading = try AVCC.read(bytes, lengthSize: lengthSize, allowingEmptyNALUnits: true)
            for warning in reading.warnings + reading.skipped { warn(warning.offset(by: offset)) }
            guard !reading.nalUnits.isEmpty else {
                warn(MediaError(.emptyNALUnit, field: "sample", byteOffset: offset, "a sample of track \(track) without NAL units; skipped"))
                return nil
            }
            let plain = lengthSize == 4 && reading.annexBOffset == nil
                && reading.nalUnits.count * 4 + reading.nalUnits.reduce(0) { $0 + $1.count } == bytes.count
            if plain { return bytes }
            return try AVCC.data(nalUnits: reading.nalUnits.map { Array(bytes[$0]) }, lengthSize: 4)
        } catch {
            warn(error.offset(by: offset))
            return nil
        }
    }

    /// Keeps a warning about a sample, up to ``warningLimit`` of them.
    private mutating func warn(_ warning: MediaError) {
        sampleWarningCount += 1
        if sampleWarningCount <= Self.warningLimit { warnings.append(warning) } else { suppressedWarningCount += 1 }
    }
}
