public import MediaCore

/// Writes fragmented MP4 in the CMAF form (ISO/IEC 14496-12 §8.8, ISO/IEC 23000-19): an
/// initialization segment (`ftyp` + `moov` with `mvex`/`trex` and empty sample tables), then
/// fragments (`moof` + `mdat`) of the frames appended since the last — sans-I/O, for a file
/// (``FragmentedMP4FileWriter``) or an HLS packager.
///
/// Each fragment's `traf` has `tfhd` (default-base-is-moof), `tfdt` version 1 (the decoding
/// time of its first sample, continuous from fragment to fragment) and `trun` version 1 with
/// signed composition offsets. Times are shifted so that the earliest presentation of the first
/// fragment maps to 0 and each track's first sample presents at its decoding time: MSE ignores
/// edit lists (mux.js #89), so the file needs none (as mediacommon's `fmp4` and Bento4 write it).
///
/// A sample's duration is the difference to the next sample of its track; the last sample of a
/// fragment, whose successor has not come, lasts as long as the one before it (an audio frame:
/// its codec frame) unless ``fragment(before:)`` is given that successor, and the next
/// fragment's `tfdt` is its first sample's true decoding time.
///
/// ```swift
/// var writer = try FragmentedMP4Writer(formats: [.video(videoFormat), .audio(aacFormat)])
/// output(try writer.initializationSegment())
/// for frame in frames {
///     if frame.isVideoKeyframe, let fragment = try writer.fragment(before: frame) { output(fragment) }  // one per GOP
///     if let change = try writer.append(frame) { /* a new init segment: change.initializationSegment */ }
/// }
/// if let fragment = try writer.fragment() { output(fragment) }
/// ```
public struct FragmentedMP4Writer: Sendable {
    /// Choices of the writer.
    public struct Options: Hashable, Sendable {
        /// The timescale of the video track (90 kHz by default).
        public var videoTimescale: Int
        /// The sample entry of H.265 (`hvc1` by default).
        public var hevcEntry: MP4SampleEntry.HEVCEntry
        /// The duration of a track's first sample when it is the only one so far: nil takes a
        /// 25th of a second for video, a codec frame for audio.
        public var lastFrameDuration: Duration?
        /// The time the first fragment's earliest presentation maps to (0 by default): an HLS
        /// packager that begins a new writer after a discontinuity continues its timeline here.
        public var timelineStart: Duration

        /// Options with the defaults: 90 kHz video, `hvc1`, the timeline from 0.
        public init(videoTimescale: Int = 90_000, hevcEntry: MP4SampleEntry.HEVCEntry = .hvc1, lastFrameDuration: Duration? = nil,
                    timelineStart: Duration = .zero) {
            self.videoTimescale = videoTimescale
            self.hevcEntry = hevcEntry
            self.lastFrameDuration = lastFrameDuration
            self.timelineStart = timelineStart
        }
    }

    /// What ``append(_:)`` hands back when a frame's format differs from its track's: the
    /// frames buffered before it as a fragment of the old initialization segment, and the new
    /// initialization segment the fragments after it need.
    public struct FormatChange: Hashable, Sendable {
        /// The fragment of the frames before the change; nil when none were buffered.
        public var fragment: [UInt8]?
        /// The initialization segment for the new format.
        public var initializationSegment: [UInt8]
    }

    /// A sample waiting for its fragment, its times in its track's timescale.
    struct PendingSample: Sendable {
        var data: [UInt8]
        var decodeTime: Int64
        var presentationTime: Int64
        var isSync: Bool
        /// The frame's presentation time as it came.
        var presentation: Duration
    }

    /// One track.
    struct Track: Sendable {
        var format: MediaFormatDescription
        var timescale: Int
        var pending: [PendingSample] = []
        /// The first frame's presentation − decoding time: subtracted from every composition offset.
        var compositionShift: Int64?
        /// The duration of the last sample written.
        var lastDuration: Int64?
    }

    /// The options.
    public let options: Options
    /// The tracks' formats (track IDs 1, 2, … in this order).
    public var formats: [MediaFormatDescription] { tracks.map(\.format) }
    /// The `mfhd.sequence_number` the next fragment gets (1 for the first).
    public private(set) var sequenceNumber: UInt32 = 1
    private var tracks: [Track]
    /// The presentation time that maps to 0 (``Options/timelineStart`` before the first
    /// fragment's earliest presentation), fixed by the first fragment.
    private var origin: Duration?

    /// A writer of one track per format (at most one video and one audio track).
    ///
    /// - Throws: `mp4UnsupportedCodec` (G.711); `mp4WriterState` for no format or two of a
    ///   media type.
    public init(formats: [MediaFormatDescription], options: Options = Options()) throws(MediaError) {
        guard !formats.isEmpty, formats.filter({ $0.video != nil }).count <= 1, formats.filter({ $0.audio != nil }).count <= 1 else {
            throw MediaError(.mp4WriterState, field: "formats", "one video and/or one audio track")
        }
        for format in formats { _ = try MP4SampleEntry.type(of: format, hevcEntry: options.hevcEntry) }
        self.options = options
        tracks = formats.map { Track(format: $0, timescale: MP4MovieBoxes.timescale(of: $0, videoTimescale: options.videoTimescale)) }
    }

    /// The initialization segment of the current formats: `ftyp` (`iso6`, `cmfc`) and `moov`.
    ///
    /// - Throws: the errors of the sample entries.
    public func initializationSegment() throws(MediaError) -> [UInt8] {
        var writer = MP4BoxWriter()
        MP4MovieBoxes.appendFileType(major: "iso6", minorVersion: 0, brands: ["iso6", "cmfc", "isom", "mp41"], to: &writer)
        let timescale = (tracks.first { $0.format.video != nil } ?? tracks[0]).timescale
        try writer.box("moov") { (moov: inout MP4BoxWriter) throws(MediaError) in
            MP4MovieBoxes.appendMovieHeader(timescale: timescale, duration: 0, nextTrackID: tracks.count + 1, to: &moov)
            for (index, track) in tracks.enumerated() {
                try appendTrack(track, trackID: index + 1, to: &moov)
            }
            moov.box("mvex") { mvex in
                for index in tracks.indices {
                    mvex.fullBox("trex", version: 0, flags: 0) { trex in
                        trex.append32(UInt32(index + 1))  // track_ID
                        trex.append32(1)                  // default_sample_description_index
                        trex.appendZeros(12)              // default duration, size, flags
                    }
                }
            }
        }
        return writer.bytes
    }

    /// A `trak` with empty sample tables.
    private func appendTrack(_ track: Track, trackID: Int, to writer: inout MP4BoxWriter) throws(MediaError) {
        try writer.box("trak") { (trak: inout MP4BoxWriter) throws(MediaError) in
            MP4MovieBoxes.appendTrackHeader(trackID: trackID, duration: 0, format: track.format, to: &trak)
            try trak.box("mdia") { (mdia: inout MP4BoxWriter) throws(MediaError) in
                MP4MovieBoxes.appendMediaHeader(timescale: track.timescale, duration: 0, to: &mdia)
                MP4MovieBoxes.appendHandler(for: track.format, to: &mdia)
                try mdia.box("minf") { (minf: inout MP4BoxWriter) throws(MediaError) in
                    MP4MovieBoxes.appendMediaInformationHeaders(for: track.format, to: &minf)
                    try minf.box("stbl") { (stbl: inout MP4BoxWriter) throws(MediaError) in
                        try MP4MovieBoxes.appendSampleDescriptions([track.format], hevcEntry: options.hevcEntry, trackID: trackID, to: &stbl)
                        for type: MP4BoxType in ["stts", "stsc", "stco"] { stbl.fullBox(type, version: 0, flags: 0) { $0.append32(0) } }
                        stbl.fullBox("stsz", version: 0, flags: 0) { $0.appendZeros(8) }
                    }
                }
            }
        }
    }

    /// Buffers one frame (in decoding order within its track) for the next fragment.
    ///
    /// - Returns: nil, or when the frame's format differs from its track's (a new SPS) the
    ///   fragment of the frames before it and the new initialization segment.
    /// - Throws: `mp4WriterState` for a media type without a track; `mp4DecodeTimeNotIncreasing`;
    ///   `mp4UnsupportedCodec` for a new format without a sample entry.
    public mutating func append(_ frame: CompressedFrame) throws(MediaError) -> FormatChange? {
        let isVideo = frame.format.video != nil
        guard let index = tracks.firstIndex(where: { ($0.format.video != nil) == isVideo }) else {
            throw MediaError(.mp4WriterState, field: "format", "a \(isVideo ? "video" : "audio") frame, and no such track")
        }
        let timescale = tracks[index].timescale
        let sample = PendingSample(data: MP4SampleEntry.sampleData(of: frame, hevcEntry: options.hevcEntry), decodeTime: MP4Time.ticks(frame.decodeTime, timescale: timescale),
                                   presentationTime: MP4Time.ticks(frame.presentationTime, timescale: timescale),
                                   isSync: frame.isKeyframe, presentation: frame.presentationTime)
        if let last = tracks[index].pending.last, sample.decodeTime <= last.decodeTime {
            throw MediaError(.mp4DecodeTimeNotIncreasing, field: "decodeTime",
                             "a frame decoding at \(frame.decodeTime) does not follow its track's previous frame")
        }
        var change: FormatChange?
        if frame.format != tracks[index].format {
            _ = try MP4SampleEntry.type(of: frame.format, hevcEntry: options.hevcEntry)
            let flushed = try fragment()
            tracks[index].format = frame.format
            change = FormatChange(fragment: flushed, initializationSegment: try initializationSegment())
        }
        tracks[index].pending.append(sample)
        return change
    }

    /// True when no frame waits for a fragment.
    public var isEmpty: Bool { tracks.allSatisfy(\.pending.isEmpty) }

    /// The frames buffered since the last fragment as one `moof` + `mdat`; nil when none are.
    ///
    /// - Parameter next: the frame that will follow (the keyframe a fragment is cut before),
    ///   if known: the last buffered sample of its track then lasts exactly until it, instead
    ///   of as long as the one before.
    /// - Throws: `valueOutOfRange` (field `baseMediaDecodeTime`) when a frame would decode
    ///   before the timeline's 0 (it presents before the first fragment's earliest frame).
    public mutating func fragment(before next: CompressedFrame? = nil) throws(MediaError) -> [UInt8]? {
        guard !isEmpty else { return nil }
        if origin == nil {
            origin = tracks.flatMap { $0.pending.map(\.presentation) }.min().map { $0 - options.timelineStart }
        }
        var runs: [(trackID: Int, baseTime: UInt64, samples: [(duration: UInt32, size: UInt32, sync: Bool, offset: Int32)])] = []
        // The samples' bytes, copied once, into the output behind the moof.
        var payloads: [[UInt8]] = [], mediaSize = 0
        for index in tracks.indices where !tracks[index].pending.isEmpty {
            var track = tracks[index]
            let shift = track.compositionShift ?? (track.pending[0].presentationTime - track.pending[0].decodeTime)
            track.compositionShift = shift
            let originTicks = MP4Time.ticks(origin ?? .zero, timescale: track.timescale)
            let times = track.pending.map { $0.decodeTime + shift - originTicks }
            var end: Int64?
            if let next, (next.format.video != nil) == (track.format.video != nil) {
                let time = MP4Time.ticks(next.decodeTime, timescale: track.timescale) + shift - originTicks
                if let last = times.last, time > last { end = time }
            }
            guard times[0] >= 0 else {
                throw MediaError(.valueOutOfRange, field: "baseMediaDecodeTime",
                                 "track \(index + 1) decodes before the first fragment's earliest presentation")
            }
            var samples: [(duration: UInt32, size: UInt32, sync: Bool, offset: Int32)] = []
            for (position, sample) in track.pending.enumerated() {
                let duration = position + 1 < times.count ? times[position + 1] - times[position]
                                                            : end.map { $0 - times[position] } ?? lastDuration(of: track)
                track.lastDuration = duration
                samples.append((UInt32(clamping: duration), UInt32(clamping: sample.data.count), sample.isSync,
                                Int32(clamping: sample.presentationTime - sample.decodeTime - shift)))
                payloads.append(sample.data)
                mediaSize += sample.data.count
            }
            runs.append((index + 1, UInt64(times[0]), samples))
            track.pending = []
            tracks[index] = track
        }
        // The moof's size does not depend on the data offsets: write it once to learn it.
        let moofSize = movieFragment(runs, dataOffsets: runs.map { _ in 0 }).count
        var offsets: [Int] = [], offset = moofSize + 8
        for run in runs {
            offsets.append(offset)
            offset += run.samples.reduce(0) { $0 + Int($1.size) }
        }
        var output = movieFragment(runs, dataOffsets: offsets)
        output.reserveCapacity(output.count + 16 + mediaSize)
        output += MP4BoxWriter.header("mdat", bodySize: UInt64(mediaSize))
        for payload in payloads { output += payload }
        sequenceNumber &+= 1
        return output
    }

    /// The duration of a fragment's last sample of `track`: the previous one, a codec frame
    /// for audio, the option, or a 25th of a second.
    private func lastDuration(of track: Track) -> Int64 {
        let pending = track.pending
        if pending.count >= 2 { return pending[pending.count - 1].decodeTime - pending[pending.count - 2].decodeTime }
        if let audio = track.format.audio, let frame = audio.samplesPerFrame { return Int64(frame) }
        if let duration = track.lastDuration { return duration }
        if let duration = options.lastFrameDuration { return MP4Time.ticks(duration, timescale: track.timescale) }
        return track.format.audio != nil ? 1024 : Int64(track.timescale / 25)
    }

    /// The `moof` of `runs` with each `trun.data_offset`.
    private func movieFragment(_ runs: [(trackID: Int, baseTime: UInt64, samples: [(duration: UInt32, size: UInt32, sync: Bool, offset: Int32)])],
                               dataOffsets: [Int]) -> [UInt8] {
        var writer = MP4BoxWriter()
        writer.box("moof") { moof in
            moof.fullBox("mfhd", version: 0, flags: 0) { $0.append32(sequenceNumber) }
            for (run, dataOffset) in zip(runs, dataOffsets) {
                moof.box("traf") { traf in
                    traf.fullBox("tfhd", version: 0, flags: 0x02_0000) { $0.append32(UInt32(run.trackID)) }  // default-base-is-moof
                    traf.fullBox("tfdt", version: 1, flags: 0) { $0.append64(run.baseTime) }
                    let hasOffsets = run.samples.contains { $0.offset != 0 }
                    // data-offset, sample-duration, -size, -flags, and -composition-time-offset when any.
                    let flags: UInt32 = 0x000001 | 0x000100 | 0x000200 | 0x000400 | (hasOffsets ? 0x000800 : 0)
                    traf.fullBox("trun", version: 1, flags: flags) { trun in
                        trun.append32(UInt32(run.samples.count))
                        trun.append32(UInt32(bitPattern: Int32(clamping: dataOffset)))
                        for sample in run.samples {
                            trun.append32(sample.duration)
                            trun.append32(sample.size)
                            // sample_depends_on 2 (an I picture) for a sync sample; else depends_on 1, is_non_sync_sample.
                            trun.append32(sample.sync ? 0x0200_0000 : 0x0101_0000)
                            if hasOffsets { trun.append32(UInt32(bitPattern: sample.offset)) }
                        }
                    }
                }
            }
        }
        return writer.bytes
    }
}
