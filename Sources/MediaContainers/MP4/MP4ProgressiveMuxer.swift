public import MediaCore

/// The sans-I/O core of a progressive MP4 (ISO/IEC 14496-12 and -14): takes frames of a video
/// and an audio track, hands back the media data to store as it goes (one chunk per track and
/// ``Options/chunkDuration``, so the tracks interleave), and at the end the `ftyp`, the `moov`
/// and the `mdat` header that go before that media data — the `moov` first, as
/// `-movflags +faststart` leaves it, with the chunk offsets shifted past it. ``MP4Writer`` drives
/// it with files.
///
/// Times: each track counts in its own timescale (``Options/videoTimescale`` for video, the
/// sample rate for audio). When B-frames make a track's first presentation later than its first
/// decoding, its edit list (`elst`) starts the track at that presentation (as FFmpeg's `movenc`
/// does), so players show the first frame at time 0 and the composition offsets (`ctts`) stay
/// positive; a track that starts later than the earliest gets an empty edit first. No other
/// track gets an edit list.
///
/// A change of a track's format (a new SPS) adds a sample description (`stsd` entry) that the
/// following chunks name (`stsc.sample_description_index`).
public struct MP4ProgressiveMuxer: Sendable {
    /// Choices of the muxer.
    public struct Options: Hashable, Sendable {
        /// The timescale of video tracks (90 kHz by default; a multiple of the frame rate, such as
        /// 24000 for 24000/1001, keeps every time exact).
        public var videoTimescale: Int
        /// The sample entry of H.265 tracks (`hvc1` by default, what Apple plays).
        public var hevcEntry: MP4SampleEntry.HEVCEntry
        /// How much of one track a chunk holds before the next chunk begins.
        public var chunkDuration: Duration
        /// The duration of a track's last sample when the track has only one (otherwise the
        /// previous delta): nil takes a 25th of a second for video, a codec frame for audio.
        public var lastFrameDuration: Duration?

        /// Options with the defaults: 90 kHz video, `hvc1`, chunks of 0.5 s.
        public init(videoTimescale: Int = 90_000, hevcEntry: MP4SampleEntry.HEVCEntry = .hvc1,
                    chunkDuration: Duration = .milliseconds(500), lastFrameDuration: Duration? = nil) {
            self.videoTimescale = videoTimescale
            self.hevcEntry = hevcEntry
            self.chunkDuration = chunkDuration
            self.lastFrameDuration = lastFrameDuration
        }
    }

    /// One track being written.
    struct Track: Sendable {
        var trackID: Int
        var timescale: Int
        var formats: [MediaFormatDescription]
        var table = MP4SampleTable()
        var earliestPresentation: Duration
        /// The chunk being filled: its bytes, first sample and first decoding time.
        var chunk: [UInt8] = []
        var chunkFirstSample = 0
        var chunkStart: Int64 = 0
        var isVideo: Bool { formats[0].video != nil }
    }

    /// The options.
    public let options: Options
    /// The tracks, in the order their first frames came.
    private(set) var tracks: [Track] = []
    /// The media data handed out so far, in bytes.
    public private(set) var mediaDataSize: UInt64 = 0

    /// A muxer with `options`.
    public init(options: Options = Options()) { self.options = options }

    /// Adds one frame (in decoding order within its track) and returns the media data to store
    /// after what was returned before (empty until a chunk is complete). The first frame of a
    /// media type starts its track.
    ///
    /// - Throws: `mp4UnsupportedCodec` (G.711); `mp4DecodeTimeNotIncreasing` when the frame does
    ///   not decode after its track's previous frame (nothing is added).
    public mutating func append(_ frame: CompressedFrame) throws(MediaError) -> [UInt8] {
        _ = try MP4SampleEntry.type(of: frame.format, hevcEntry: options.hevcEntry)
        let isVideo = frame.format.video != nil
        guard let index = tracks.firstIndex(where: { $0.isVideo == isVideo }) else {
            var track = Track(trackID: tracks.count + 1, timescale: MP4MovieBoxes.timescale(of: frame.format, videoTimescale: options.videoTimescale),
                              formats: [frame.format], earliestPresentation: frame.presentationTime)
            add(frame, to: &track)
            tracks.append(track)
            return []
        }
        var track = tracks[index]
        let decodeTime = MP4Time.ticks(frame.decodeTime, timescale: track.timescale)
        if let last = track.table.decodeTimes.last, decodeTime <= last {
            throw MediaError(.mp4DecodeTimeNotIncreasing, field: "decodeTime",
                             "a frame decoding at \(frame.decodeTime) does not follow its track's previous frame")
        }
        var output: [UInt8] = []
        if frame.format != track.formats[track.formats.count - 1] {
            // A new sample description: the chunk so far belongs to the old one.
            output = closeChunk(&track)
            track.formats.append(frame.format)
        } else if decodeTime - track.chunkStart >= MP4Time.ticks(options.chunkDuration, timescale: track.timescale) {
            output = closeChunk(&track)
        }
        add(frame, to: &track)
        tracks[index] = track
        return output
    }

    /// Adds `frame` to the track's chunk being filled.
    private func add(_ frame: CompressedFrame, to track: inout Track) {
        let decodeTime = MP4Time.ticks(frame.decodeTime, timescale: track.timescale)
        let presentationTime = MP4Time.ticks(frame.presentationTime, timescale: track.timescale)
        if track.chunk.isEmpty {
            track.chunkFirstSample = track.table.count
            track.chunkStart = decodeTime
        }
        let data = MP4SampleEntry.sampleData(of: frame, hevcEntry: options.hevcEntry)
        if frame.isKeyframe { track.table.syncSamples.append(track.table.count) }
        track.table.sizes.append(UInt32(clamping: data.count))
        track.table.decodeTimes.append(decodeTime)
        track.table.compositionOffsets.append(Int32(clamping: presentationTime - decodeTime))
        track.earliestPresentation = min(track.earliestPresentation, frame.presentationTime)
        track.chunk += data
    }

    /// Ends the track's chunk being filled: records it at the current end of the media data and
    /// returns its bytes.
    private mutating func closeChunk(_ track: inout Track) -> [UInt8] {
        guard track.table.count > track.chunkFirstSample else { return [] }
        track.table.chunks.append(MP4SampleTable.Chunk(firstSample: track.chunkFirstSample,
                                                       sampleCount: track.table.count - track.chunkFirstSample,
                                                       sampleDescriptionIndex: track.formats.count, offset: mediaDataSize))
        mediaDataSize += UInt64(track.chunk.count)
        defer {
            track.chunk = []
            track.chunkFirstSample = track.table.count
        }
        return track.chunk
    }

    /// Ends every track: returns the last media data to store (after all returned before), and
    /// the header to put before the media data in the file: `ftyp`, `moov` and the `mdat`
    /// box header. Frames appended afterwards start new chunks and need another `finish()`.
    ///
    /// - Throws: the errors of the sample entries.
    public mutating func finish() throws(MediaError) -> (mediaData: [UInt8], header: [UInt8]) {
        var remaining: [UInt8] = []
        for index in tracks.indices {
            var track = tracks[index]
            remaining += closeChunk(&track)
            track.table.lastSampleDuration = lastSampleDuration(of: track)
            tracks[index] = track
        }
        var fileType = MP4BoxWriter()
        MP4MovieBoxes.appendFileType(major: "isom", minorVersion: 0x200, brands: ["isom", "iso2", "avc1", "mp41"], to: &fileType)
        let mediaDataHeader = MP4BoxWriter.header("mdat", bodySize: mediaDataSize)
        // The moov's size depends on stco or co64, which depends on the moov's size: grow until stable.
        var movie = try movieBox(offsetShift: UInt64(fileType.bytes.count + mediaDataHeader.count))
        while true {
            let shift = UInt64(fileType.bytes.count + movie.count + mediaDataHeader.count)
            let next = try movieBox(offsetShift: shift)
            if next.count == movie.count {
                movie = next
                break
            }
            movie = next
        }
        return (remaining, fileType.bytes + movie + mediaDataHeader)
    }

    /// A track's last sample duration: the previous delta, else the option, else a 25th of a
    /// second (video) or a codec frame (audio).
    private func lastSampleDuration(of track: Track) -> Int64 {
        let times = track.table.decodeTimes
        if times.count >= 2 { return times[times.count - 1] - times[times.count - 2] }
        if let duration = options.lastFrameDuration { return MP4Time.ticks(duration, timescale: track.timescale) }
        if let audio = track.formats[0].audio { return Int64(audio.samplesPerFrame ?? 1024) }
        return Int64(track.timescale / 25)
    }

    /// The movie's timescale: its first video track's, else its first track's.
    var movieTimescale: Int {
        (tracks.first(where: \.isVideo) ?? tracks.first)?.timescale ?? options.videoTimescale
    }

    /// The `moov` with chunk offsets shifted by `offsetShift`.
    func movieBox(offsetShift: UInt64) throws(MediaError) -> [UInt8] {
        let origin = tracks.map(\.earliestPresentation).min() ?? .zero
        let movieTimescale = movieTimescale
        var writer = MP4BoxWriter()
        let edits = tracks.map { editList(of: $0, origin: origin, movieTimescale: movieTimescale) }
        let trackDurations = zip(tracks, edits).map { track, edits in
            edits.isEmpty ? MP4Time.rescale(track.table.mediaDuration, from: track.timescale, to: movieTimescale)
                          : edits.reduce(0) { $0 + $1.segmentDuration }
        }
        try writer.box("moov") { (moov: inout MP4BoxWriter) throws(MediaError) in
            MP4MovieBoxes.appendMovieHeader(timescale: movieTimescale, duration: trackDurations.max() ?? 0,
                                            nextTrackID: tracks.count + 1, to: &moov)
            for (index, track) in tracks.enumerated() {
                try appendTrack(track, duration: trackDurations[index], edits: edits[index], offsetShift: offsetShift, to: &moov)
            }
        }
        return writer.bytes
    }

    /// One edit (§8.6.6 `elst` entry): `mediaTime` −1 is an empty edit.
    struct Edit: Hashable, Sendable {
        var segmentDuration: Int64
        var mediaTime: Int64
    }

    /// The track's edit list: empty unless the track starts after `origin` (an empty edit) or
    /// its first presentation is later than its first decoding (B-frames: the edit starts the
    /// media there).
    func editList(of track: Track, origin: Duration, movieTimescale: Int) -> [Edit] {
        let span = track.table.compositionSpan
        let delay = MP4Time.ticks(track.earliestPresentation - origin, timescale: movieTimescale)
        guard span.start != 0 || delay > 0 else { return [] }
        var edits: [Edit] = []
        if delay > 0 { edits.append(Edit(segmentDuration: delay, mediaTime: -1)) }
        edits.append(Edit(segmentDuration: MP4Time.rescale(span.end - span.start, from: track.timescale, to: movieTimescale),
                          mediaTime: span.start))
        return edits
    }

    /// One `trak`.
    private func appendTrack(_ track: Track, duration: Int64, edits: [Edit], offsetShift: UInt64,
                             to writer: inout MP4BoxWriter) throws(MediaError) {
        try writer.box("trak") { (trak: inout MP4BoxWriter) throws(MediaError) in
            MP4MovieBoxes.appendTrackHeader(trackID: track.trackID, duration: duration, format: track.formats[0], to: &trak)
            if !edits.isEmpty {
                trak.box("edts") { edts in
                    let version: UInt8 = edits.contains { $0.segmentDuration > Int64(UInt32.max) || $0.mediaTime > Int64(Int32.max) } ? 1 : 0
                    edts.fullBox("elst", version: version, flags: 0) { elst in
                        elst.append32(UInt32(edits.count))
                        for edit in edits {
                            MP4MovieBoxes.appendTime(edit.segmentDuration, version: version, to: &elst)
                            if version == 1 { elst.append64(UInt64(bitPattern: edit.mediaTime)) }
                            else { elst.append32(UInt32(bitPattern: Int32(truncatingIfNeeded: edit.mediaTime))) }
                            elst.append32(0x0001_0000)  // media_rate_integer 1, media_rate_fraction 0
                        }
                    }
                }
            }
            try trak.box("mdia") { (mdia: inout MP4BoxWriter) throws(MediaError) in
                MP4MovieBoxes.appendMediaHeader(timescale: track.timescale, duration: track.table.mediaDuration, to: &mdia)
                MP4MovieBoxes.appendHandler(for: track.formats[0], to: &mdia)
                try mdia.box("minf") { (minf: inout MP4BoxWriter) throws(MediaError) in
                    MP4MovieBoxes.appendMediaInformationHeaders(for: track.formats[0], to: &minf)
                    try minf.box("stbl") { (stbl: inout MP4BoxWriter) throws(MediaError) in
                        try MP4MovieBoxes.appendSampleDescriptions(track.formats, hevcEntry: options.hevcEntry, trackID: track.trackID, to: &stbl)
                        track.table.appendBoxes(to: &stbl, offsetShift: offsetShift)
                    }
                }
            }
        }
    }
}
