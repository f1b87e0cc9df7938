/// One track's samples as a progressive MP4 indexes them (ISO/IEC 14496-12 §8.6–§8.7), and the
/// sample table boxes made from them: `stts`, `ctts`, `stss`, `stsc`, `stsz` and `stco` or
/// `co64`. Times are in the track's timescale; chunk offsets count from the start of the media
/// data (the writer shifts them to file offsets).
struct MP4SampleTable: Sendable {
    /// One run of samples stored together.
    struct Chunk: Hashable, Sendable {
        /// The index of its first sample.
        var firstSample: Int
        /// How many samples it holds.
        var sampleCount: Int
        /// Its sample description (1-based, `stsc.sample_description_index`).
        var sampleDescriptionIndex: Int
        /// Where it begins, from the start of the media data.
        var offset: UInt64
    }

    /// Each sample's size in bytes.
    var sizes: [UInt32] = []
    /// Each sample's decoding time.
    var decodeTimes: [Int64] = []
    /// Each sample's composition offset (presentation − decoding time).
    var compositionOffsets: [Int32] = []
    /// The indexes of the sync samples (keyframes).
    var syncSamples: [Int] = []
    /// The chunks, in order.
    var chunks: [Chunk] = []
    /// The duration of the last sample (the previous delta, or the one the writer was given).
    var lastSampleDuration: Int64 = 0

    /// The number of samples.
    var count: Int { sizes.count }

    /// Each sample's duration: the delta to the next decoding time, ``lastSampleDuration`` for
    /// the last.
    var durations: [Int64] {
        guard !decodeTimes.isEmpty else { return [] }
        return zip(decodeTimes, decodeTimes.dropFirst()).map { $1 - $0 } + [lastSampleDuration]
    }

    /// The sum of the durations: the track's `mdhd.duration`.
    var mediaDuration: Int64 {
        guard let first = decodeTimes.first, let last = decodeTimes.last else { return 0 }
        return last - first + lastSampleDuration
    }

    /// The composition time span, from the track's first decoding time: the earliest
    /// presentation and the end of the last sample presented.
    var compositionSpan: (start: Int64, end: Int64) {
        guard let origin = decodeTimes.first else { return (0, 0) }
        var start = Int64.max, end = Int64.min
        for (index, duration) in durations.enumerated() {
            let time = decodeTimes[index] - origin + Int64(compositionOffsets[index])
            start = min(start, time)
            end = max(end, time + duration)
        }
        return (start, end)
    }

    /// Appends the sample table boxes (inside `stbl`, after `stsd`), the chunk offsets shifted
    /// by `offsetShift` (where the media data begins in the file).
    func appendBoxes(to writer: inout MP4BoxWriter, offsetShift: UInt64) {
        appendTimeToSample(to: &writer)
        appendCompositionOffsets(to: &writer)
        if syncSamples.count < count {
            writer.fullBox("stss", version: 0, flags: 0) { box in
                box.append32(UInt32(syncSamples.count))
                for index in syncSamples { box.append32(UInt32(index + 1)) }
            }
        }
        appendSampleToChunk(to: &writer)
        writer.fullBox("stsz", version: 0, flags: 0) { box in
            let uniform = sizes.allSatisfy { $0 == sizes.first }
            box.append32(uniform ? sizes.first ?? 0 : 0)  // sample_size
            box.append32(UInt32(count))
            if !uniform { for size in sizes { box.append32(size) } }
        }
        Self.appendChunkOffsets(chunks.map { $0.offset + offsetShift }, to: &writer)
    }

    /// `stts` (§8.6.1.2): runs of equal decoding-time deltas.
    func appendTimeToSample(to writer: inout MP4BoxWriter) {
        let runs = Self.runs(durations)
        writer.fullBox("stts", version: 0, flags: 0) { box in
            box.append32(UInt32(runs.count))
            for run in runs {
                box.append32(UInt32(run.count))
                box.append32(UInt32(truncatingIfNeeded: run.value))
            }
        }
    }

    /// `ctts` (§8.6.1.3), only when some sample presents at another time than it decodes
    /// (B-frames): version 0 when every offset is positive or zero (what every player reads),
    /// version 1 (signed) when one is negative.
    func appendCompositionOffsets(to writer: inout MP4BoxWriter) {
        guard compositionOffsets.contains(where: { $0 != 0 }) else { return }
        let runs = Self.runs(compositionOffsets.map(Int64.init))
        let version: UInt8 = compositionOffsets.contains { $0 < 0 } ? 1 : 0
        writer.fullBox("ctts", version: version, flags: 0) { box in
            box.append32(UInt32(runs.count))
            for run in runs {
                box.append32(UInt32(run.count))
                box.append32(UInt32(bitPattern: Int32(truncatingIfNeeded: run.value)))
            }
        }
    }

    /// `stsc` (§8.7.4): a row where the samples per chunk or the description change.
    func appendSampleToChunk(to writer: inout MP4BoxWriter) {
        var rows: [(firstChunk: Int, samplesPerChunk: Int, descriptionIndex: Int)] = []
        for (index, chunk) in chunks.enumerated() {
            if let last = rows.last, last.samplesPerChunk == chunk.sampleCount,
               last.descriptionIndex == chunk.sampleDescriptionIndex { continue }
            rows.append((index + 1, chunk.sampleCount, chunk.sampleDescriptionIndex))
        }
        writer.fullBox("stsc", version: 0, flags: 0) { box in
            box.append32(UInt32(rows.count))
            for row in rows {
                box.append32(UInt32(row.firstChunk))
                box.append32(UInt32(row.samplesPerChunk))
                box.append32(UInt32(row.descriptionIndex))
            }
        }
    }

    /// `stco` (§8.7.5) when every offset fits 32 bits, else `co64`.
    static func appendChunkOffsets(_ offsets: [UInt64], to writer: inout MP4BoxWriter) {
        let wide = offsets.contains { $0 > UInt64(UInt32.max) }
        writer.fullBox(wide ? "co64" : "stco", version: 0, flags: 0) { box in
            box.append32(UInt32(offsets.count))
            for offset in offsets {
                if wide { box.append64(offset) } else { box.append32(UInt32(offset)) }
            }
        }
    }

    /// Runs of equal values, as `stts` and `ctts` count them.
    static func runs(_ values: [Int64]) -> [(count: Int, value: Int64)] {
        var runs: [(count: Int, value: Int64)] = []
        for value in values {
            if let last = runs.last, last.value == value {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((1, value))
            }
        }
        return runs
    }
}
