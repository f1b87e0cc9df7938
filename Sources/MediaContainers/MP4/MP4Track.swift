public import MediaCore

/// One track of an MP4 file (`trak`, ISO/IEC 14496-12 §8.3): its identity, clock, sample
/// entries and edit-list shift, and its samples (from the sample tables, or the `trun`s of a
/// fragmented file).
public struct MP4Track: Hashable, Sendable {
    /// `tkhd` `track_ID`.
    public var trackID: UInt32
    /// `hdlr` `handler_type`: `vide`, `soun`, or another (hint, text, metadata …).
    public var handlerType: MP4BoxType
    /// `mdhd` `timescale`: ticks per second of the track's times.
    public var timescale: UInt32
    /// `mdhd` `duration`, in ``timescale`` ticks (0 in a fragmented file's `moov`; then the sum of
    /// its samples' durations once the fragments are read).
    public var duration: Int64
    /// The `stsd` entries, in order (samples name them 1-based).
    public var sampleEntries: [MP4SampleDescription]
    /// The shift the edit list puts on every time of the track, in ``timescale`` ticks: the
    /// leading empty edits' durations minus the first media edit's `media_time` (for video,
    /// minus also the gap from `media_time` to the first picture that presents inside the edit;
    /// see ``MP4Reader`` for what is and is not applied).
    public var editShift: Int64
    /// The samples in decoding order, times before ``editShift``.
    public var samples: [MP4Sample]

    /// A track of its parts.
    public init(trackID: UInt32, handlerType: MP4BoxType, timescale: UInt32, duration: Int64,
                sampleEntries: [MP4SampleDescription], editShift: Int64 = 0, samples: [MP4Sample] = []) {
        self.trackID = trackID
        self.handlerType = handlerType
        self.timescale = timescale
        self.duration = duration
        self.sampleEntries = sampleEntries
        self.editShift = editShift
        self.samples = samples
    }

    /// The format of the first sample entry; nil when the reader does not read its coding.
    public var format: MediaFormatDescription? { sampleEntries.first?.format }

    /// The format of the samples naming 1-based entry `index`; nil out of range or unread.
    public func format(ofEntry index: Int) -> MediaFormatDescription? {
        index >= 1 && index <= sampleEntries.count ? sampleEntries[index - 1].format : nil
    }

    /// Ticks of ``timescale`` as a `Duration` (exact to the nanosecond).
    public func duration(ofTicks ticks: Int64) -> Duration {
        let scale = Int64(Swift.max(timescale, 1))
        var seconds = ticks / scale, remainder = ticks % scale
        if remainder < 0 { seconds -= 1; remainder += scale }
        return .seconds(seconds) + .nanoseconds(remainder * 1_000_000_000 / scale)
    }

    /// Reads a `trak`.
    ///
    /// - Parameters:
    ///   - trak: the box.
    ///   - movieTimescale: `mvhd` `timescale` (edit durations count in it).
    ///   - fileSize: the file's size (samples past it are dropped with a warning).
    ///   - warnings: where tolerable problems go.
    /// - Throws: `mp4MissingBox` without `tkhd`, `mdia`, `mdhd`, `hdlr`, `minf`, `stbl` (without
    ///   `stsd` the track has no sample entries, and a warning says so);
    ///   the errors of the boxes' fields and of the sample tables.
    init(_ trak: MP4Box, movieTimescale: UInt32, fileSize: Int, warnings: inout [MediaError]) throws(MediaError) {
        func need(_ box: MP4Box?, _ type: MP4BoxType, in parent: MP4Box) throws(MediaError) -> MP4Box {
            guard let box else {
                throw MediaError(.mp4MissingBox, field: type.description, byteOffset: parent.header.offset, "'\(parent.type)' without '\(type)'")
            }
            return box
        }
        let tkhd = try need(try trak.child("tkhd"), "tkhd", in: trak)
        var cursor = tkhd.cursor
        let (tkhdVersion, _) = try cursor.readVersionAndFlags("tkhd")
        try cursor.skip(tkhdVersion == 1 ? 16 : 8, "creation_time")
        let trackID = try cursor.readUInt32("track_ID")
        let mdia = try need(try trak.child("mdia"), "mdia", in: trak)
        let mdhd = try need(try mdia.child("mdhd"), "mdhd", in: mdia)
        cursor = mdhd.cursor
        let (mdhdVersion, _) = try cursor.readVersionAndFlags("mdhd")
        try cursor.skip(mdhdVersion == 1 ? 16 : 8, "creation_time")
        let timescale = try cursor.readUInt32("timescale")
        let duration = mdhdVersion == 1 ? Int64(truncatingIfNeeded: try cursor.readUInt64("duration")) : Int64(try cursor.readUInt32("duration"))
        guard timescale > 0 else {
            throw MediaError(.valueOutOfRange, field: "timescale", byteOffset: cursor.fileOffset - (mdhdVersion == 1 ? 12 : 8), "an mdhd timescale of 0")
        }
        let hdlr = try need(try mdia.child("hdlr"), "hdlr", in: mdia)
        cursor = hdlr.cursor
        _ = try cursor.readVersionAndFlags("hdlr")
        try cursor.skip(4, "pre_defined")
        let handler = MP4BoxType(bytes: try cursor.readBytes(4, "handler_type"))
        let minf = try need(try mdia.child("minf"), "minf", in: mdia)
        let stbl = try need(try minf.child("stbl"), "stbl", in: minf)
        var entries: [MP4SampleDescription] = []
        // A track without `stsd` is kept without sample entries (its samples are then skipped
        // with a warning), as FFmpeg keeps it as a stream of no codec and reads the other tracks
        // (androidx/media's sample_missing_stsd.mp4).
        let stsd = try stbl.child("stsd")
        if stsd == nil {
            warnings.append(MediaError(.mp4MissingBox, field: "stsd", byteOffset: stbl.header.offset,
                                       "track \(trackID): 'stbl' without 'stsd': its samples cannot be read"))
        }
        for entry in try stsd?.children(skipping: 8) ?? [] {
            do throws(MediaError) {
                entries.append(try MP4SampleDescription(entry))
            } catch {
                warnings.append(error)
                entries.append(MP4SampleDescription(type: entry.type, format: nil))
            }
        }
        self.init(trackID: trackID, handlerType: handler, timescale: timescale, duration: duration, sampleEntries: entries)
        editShift = try Self.editShift(try trak.child("edts"), movieTimescale: movieTimescale, mediaTimescale: timescale)
        samples = try MP4SampleTableReader.samples(stbl, fileSize: fileSize, warnings: &warnings)
        // FFmpeg (`mov_fix_index`) presents the first picture inside a video track's edit at the
        // edit's start: an edit that starts between pictures (androidx/media's
        // iibbibb_editlist_videoonly.mp4) moves the times earlier by the gap (`min_corrected_pts`).
        if handler == "vide", let mediaTime = try Self.editMediaTime(try trak.child("edts")),
           let first = samples.lazy.map({ $0.decodeTime &+ $0.compositionOffset }).filter({ $0 >= mediaTime }).min(), first > mediaTime {
            editShift &-= first &- mediaTime
        }
        if handler == "soun", let end = try Self.editEnd(try trak.child("edts"), movieTimescale: movieTimescale, mediaTimescale: timescale) {
            samples = Self.samples(samples, endingAt: end)
        }
    }

    /// The first media edit's `media_time` (after any empty edits), when it is not negative.
    static func editMediaTime(_ edts: MP4Box?) throws(MediaError) -> Int64? {
        guard let edts, let elst = try edts.child("elst") else { return nil }
        var cursor = elst.cursor
        let (version, _) = try cursor.readVersionAndFlags("elst")
        let count = Int(try cursor.readUInt32("entry_count"))
        guard count <= cursor.remaining / (version == 1 ? 20 : 12) else { return nil }
        for _ in 0..<count {
            try cursor.skip(version == 1 ? 8 : 4, "segment_duration")
            let mediaTime = version == 1 ? Int64(bitPattern: try cursor.readUInt64("media_time")) : Int64(try cursor.readInt32("media_time"))
            try cursor.skip(4, "media_rate")
            if mediaTime != -1 { return mediaTime >= 0 ? mediaTime : nil }
        }
        return nil
    }

    /// Where the edit list's one media edit ends on the track's clock (`media_time` plus
    /// `segment_duration` scaled from the movie's clock), when the list has exactly one media
    /// edit (after any empty ones) with a non-zero duration; nil otherwise.
    static func editEnd(_ edts: MP4Box?, movieTimescale: UInt32, mediaTimescale: UInt32) throws(MediaError) -> Int64? {
        guard let edts, let elst = try edts.child("elst"), movieTimescale > 0 else { return nil }
        var cursor = elst.cursor
        let (version, _) = try cursor.readVersionAndFlags("elst")
        let count = Int(try cursor.readUInt32("entry_count"))
        guard count <= cursor.remaining / (version == 1 ? 20 : 12) else { return nil }
        var end: Int64?
        for _ in 0..<count {
            let duration = version == 1 ? Int64(clamping: try cursor.readUInt64("segment_duration")) : Int64(try cursor.readUInt32("segment_duration"))
            let mediaTime = version == 1 ? Int64(bitPattern: try cursor.readUInt64("media_time")) : Int64(try cursor.readInt32("media_time"))
            try cursor.skip(4, "media_rate")
            if mediaTime == -1 { continue }
            let (scaled, overflow) = duration.multipliedReportingOverflow(by: Int64(mediaTimescale))
            guard end == nil, duration > 0, mediaTime >= 0, !overflow else { return nil }
            end = mediaTime &+ scaled / Int64(movieTimescale)
        }
        return end
    }

    /// An audio track's samples cut where its edit ends, as FFmpeg's mov demuxer cuts them
    /// (`mov_fix_index`): the first sample whose end (its presentation time plus its duration)
    /// reaches `end` is the last one kept. A QuickTime file's AAC track whose edit stops short
    /// of its last packets (androidx/media's bt601.mov, GStreamer's `mp4mux`) loses those packets
    /// in FFmpeg, and here.
    static func samples(_ samples: [MP4Sample], endingAt end: Int64) -> [MP4Sample] {
        for index in samples.indices.dropLast() {
            let sample = samples[index], duration = samples[index + 1].decodeTime &- sample.decodeTime
            if sample.decodeTime &+ sample.compositionOffset &+ duration >= end { return Array(samples.prefix(index + 1)) }
        }
        return samples
    }

    /// The shift of an edit list (`edts` → `elst`, §8.6.6) in the common case FFmpeg applies:
    /// leading empty edits (`media_time` −1) delay the track by their durations, and the first
    /// media edit's `media_time` is where presentation starts (its times move earlier by it).
    /// Later edits (cuts, repeats, dwells, rates) are not applied.
    static func editShift(_ edts: MP4Box?, movieTimescale: UInt32, mediaTimescale: UInt32) throws(MediaError) -> Int64 {
        guard let edts, let elst = try edts.child("elst") else { return 0 }
        var cursor = elst.cursor
        let (version, _) = try cursor.readVersionAndFlags("elst")
        let entrySize = version == 1 ? 20 : 12
        let count = Int(try cursor.readUInt32("entry_count"))
        guard count <= cursor.remaining / entrySize else {
            throw MediaError(.truncated, field: "entry_count", byteOffset: elst.header.payloadOffset + 4,
                             "'elst' says \(count) entries, it holds \(cursor.remaining / entrySize)")
        }
        var delay: Int64 = 0
        for _ in 0..<count {
            let duration = version == 1 ? Int64(clamping: try cursor.readUInt64("segment_duration")) : Int64(try cursor.readUInt32("segment_duration"))
            let mediaTime = version == 1 ? Int64(bitPattern: try cursor.readUInt64("media_time")) : Int64(try cursor.readInt32("media_time"))
            try cursor.skip(4, "media_rate")
            if mediaTime == -1 {
                // An empty edit: its duration, from the movie's clock to the track's.
                let (scaled, overflow) = duration.multipliedReportingOverflow(by: Int64(mediaTimescale))
                if !overflow && movieTimescale > 0 { delay &+= scaled / Int64(movieTimescale) }
                continue
            }
            return delay &- mediaTime
        }
        return delay
    }
}
