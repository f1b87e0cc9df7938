import MediaCore

/// A progressive track's sample table (ISO/IEC 14496-12 §8.5–8.7, the `stbl` box) read into its
/// samples. Every table's `entry_count` is checked against the bytes present before a single
/// entry is read, so a count of 2³² in a small box is an error, never an allocation; the number
/// of samples (`stsz` `sample_count`) is clamped to what the file can hold (each sample at least
/// one byte) and to what `stco`/`stsc` place, with a warning when they disagree.
enum MP4SampleTableReader {
    /// The samples of `stbl`, in decoding order.
    ///
    /// - Parameters:
    ///   - stbl: the sample table box.
    ///   - fileSize: the file's size: samples past it end the list (a cut-off file) with a warning.
    ///   - warnings: where tolerable disagreements are reported.
    /// - Throws: `mp4MissingBox` without `stsz`/`stz2` or `stco`/`co64`; `truncated` (field
    ///   `entry_count` or `sample_count`) when a table's count needs more bytes than its box has.
    static func samples(_ stbl: MP4Box, fileSize: Int, warnings: inout [MediaError]) throws(MediaError) -> [MP4Sample] {
        let boxes = try stbl.children()
        func box(_ type: MP4BoxType) -> MP4Box? { boxes.first { $0.type == type } }
        guard let sizes = box("stsz") ?? box("stz2") else {
            throw MediaError(.mp4MissingBox, field: "stsz", byteOffset: stbl.header.offset, "a sample table without 'stsz'")
        }
        guard let offsets = box("stco") ?? box("co64") else {
            throw MediaError(.mp4MissingBox, field: "stco", byteOffset: stbl.header.offset, "a sample table without 'stco' or 'co64'")
        }
        var sampleSizes = try SampleSizes(sizes, fileSize: fileSize, warnings: &warnings)
        let chunkOffsets = try readTable(offsets, entrySize: offsets.type == "co64" ? 8 : 4) { cursor throws(MediaError) in
            offsets.type == "co64" ? Int(clamping: try cursor.readUInt64("chunk_offset")) : Int(try cursor.readUInt32("chunk_offset"))
        }
        let chunks = try box("stsc").map { stsc throws(MediaError) in
            try readTable(stsc, entrySize: 12) { cursor throws(MediaError) in
                (first: Int(try cursor.readUInt32("first_chunk")), perChunk: Int(try cursor.readUInt32("samples_per_chunk")),
                 description: Int(try cursor.readUInt32("sample_description_index")))
            }
        } ?? []
        let times = try box("stts").map { stts throws(MediaError) in
            try readTable(stts, entrySize: 8) { cursor throws(MediaError) in
                (count: Int(try cursor.readUInt32("sample_count")), delta: Int64(try cursor.readUInt32("sample_delta")))
            }
        } ?? []
        // ctts version 0 says unsigned, version 1 signed; muxers write negative offsets in both,
        // so both are read signed (as FFmpeg does).
        let offsetsTable = try box("ctts").map { ctts throws(MediaError) in
            try readTable(ctts, entrySize: 8) { cursor throws(MediaError) in
                (count: Int(try cursor.readUInt32("sample_count")), offset: Int64(try cursor.readInt32("sample_offset")))
            }
        } ?? []
        let syncSamples: Set<Int>? = try box("stss").map { stss throws(MediaError) in
            Set(try readTable(stss, entrySize: 4) { cursor throws(MediaError) in Int(try cursor.readUInt32("sample_number")) })
        }

        var samples: [MP4Sample] = []
        samples.reserveCapacity(Swift.min(sampleSizes.count, 1 << 16))
        var timeEntry = 0, timeLeft = times.first?.count ?? 0, decodeTime: Int64 = 0
        var offsetEntry = 0, offsetLeft = offsetsTable.first?.count ?? 0
        var stscEntry = 0
        var warnedTiming = false
        chunkLoop: for (chunkIndex, chunkOffset) in chunkOffsets.enumerated() {
            let chunk = chunkIndex + 1
            // The stsc entry in force: the last whose first_chunk ≤ chunk; entries that do not
            // increase cover no chunk (so a looping table cannot hang the reader).
            while stscEntry + 1 < chunks.count && chunks[stscEntry + 1].first <= chunk { stscEntry += 1 }
            guard stscEntry < chunks.count, chunks[stscEntry].first <= chunk || stscEntry == 0 else { continue }
            let entry = chunks[stscEntry]
            var offset = chunkOffset
            for _ in 0..<entry.perChunk {
                guard samples.count < sampleSizes.count else { break chunkLoop }
                let size = sampleSizes.size(of: samples.count)
                guard offset <= fileSize, size <= fileSize - offset else {
                    warnings.append(MediaError(.mp4SamplePastEnd, field: "chunk_offset", byteOffset: offsets.header.offset,
                                               "sample \(samples.count + 1) (\(size) bytes at \(offset)) ends past the file's \(fileSize) bytes: the file is cut off; \(samples.count) samples kept"))
                    break chunkLoop
                }
                while timeLeft == 0 && timeEntry + 1 < times.count {
                    timeEntry += 1
                    timeLeft = times[timeEntry].count
                }
                if timeLeft == 0 && !warnedTiming {
                    warnedTiming = true
                    warnings.append(MediaError(.mp4SampleTableInconsistent, field: "stts", byteOffset: stbl.header.offset,
                                               "'stts' times fewer samples than 'stsz' has; the last delta is repeated"))
                }
                let delta = times.isEmpty ? 0 : times[timeEntry].delta
                timeLeft = Swift.max(0, timeLeft - 1)
                while offsetLeft == 0 && offsetEntry + 1 < offsetsTable.count {
                    offsetEntry += 1
                    offsetLeft = offsetsTable[offsetEntry].count
                }
                let composition = offsetLeft > 0 ? offsetsTable[offsetEntry].offset : 0
                offsetLeft = Swift.max(0, offsetLeft - 1)
                let number = samples.count + 1
                samples.append(MP4Sample(offset: offset, size: size, decodeTime: decodeTime, compositionOffset: composition,
                                         isSync: syncSamples?.contains(number) ?? true, descriptionIndex: entry.description))
                decodeTime &+= delta
                offset += size
            }
        }
        if samples.count < sampleSizes.count && (warnings.last?.code != .mp4SamplePastEnd) {
            warnings.append(MediaError(.mp4SampleTableInconsistent, field: "stsc", byteOffset: stbl.header.offset,
                                       "'stsz' has \(sampleSizes.count) samples, 'stsc' and 'stco' place \(samples.count)"))
        }
        sampleSizes.release()
        // Negative composition offsets (ctts version 1, or version 0 read signed): decoding times
        // move earlier by the most negative offset so that no picture presents before it is
        // decoded; presentation times stay (FFmpeg's `dts_shift`). As FFmpeg 5.1's
        // `mov_read_ctts`, the table's last two entries are not counted (`i + 2 < entries`): an
        // MV-HEVC .mov whose only negative offsets are there (androidx/media's
        // water_180_mvhevc_5frames.mov) keeps its decoding times.
        let shift = -Swift.min(0, offsetsTable.dropLast(2).lazy.map(\.offset).min() ?? 0)
        if shift > 0 {
            for index in samples.indices {
                samples[index].decodeTime &-= shift
                samples[index].compositionOffset &+= shift
            }
        }
        return samples
    }

    /// Reads a FullBox table: `entry_count`, then that many entries of `entrySize` bytes, each read
    /// by `entry`, after the count has been checked against the bytes present.
    static func readTable<Entry>(_ box: MP4Box, entrySize: Int,
                                 _ entry: (inout MP4ByteCursor) throws(MediaError) -> Entry) throws(MediaError) -> [Entry] {
        var cursor = box.cursor
        _ = try cursor.readVersionAndFlags(box.type)
        let count = Int(try cursor.readUInt32("entry_count"))
        guard count <= cursor.remaining / entrySize else {
            throw MediaError(.truncated, field: "entry_count", byteOffset: box.header.payloadOffset + 4,
                             "'\(box.type)' says \(count) entries of \(entrySize) bytes, it holds \(cursor.remaining / entrySize)")
        }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count { entries.append(try entry(&cursor)) }
        return entries
    }

    /// `stsz` or `stz2` (§8.7.3): one size for every sample, or a size per sample.
    struct SampleSizes {
        /// The number of samples (clamped to what the file can hold).
        private(set) var count: Int
        private let constant: Int
        private var table: [Int]

        init(_ box: MP4Box, fileSize: Int, warnings: inout [MediaError]) throws(MediaError) {
            var cursor = box.cursor
            _ = try cursor.readVersionAndFlags(box.type)
            if box.type == "stz2" {
                try cursor.skip(3, "reserved")
                let fieldSize = Int(try cursor.readUInt8("field_size"))
                guard [4, 8, 16].contains(fieldSize) else {
                    throw MediaError(.valueOutOfRange, field: "field_size", byteOffset: cursor.fileOffset - 1, "field_size \(fieldSize), expected 4, 8 or 16")
                }
                count = Int(try cursor.readUInt32("sample_count"))
                guard count <= cursor.remaining * 8 / fieldSize else {
                    throw MediaError(.truncated, field: "sample_count", byteOffset: cursor.fileOffset - 4,
                                     "'stz2' says \(count) samples, it holds \(cursor.remaining * 8 / fieldSize)")
                }
                constant = 0
                table = []
                table.reserveCapacity(count)
                let bytes = cursor.readRest()
                for index in 0..<count {
                    switch fieldSize {
                    case 4:
                        let byte = bytes[bytes.startIndex + index / 2]
                        table.append(Int(index % 2 == 0 ? byte >> 4 : byte & 0x0F))
                    case 8: table.append(Int(bytes[bytes.startIndex + index]))
                    default: table.append(Int(bytes[bytes.startIndex + 2 * index]) << 8 | Int(bytes[bytes.startIndex + 2 * index + 1]))
                    }
                }
                return
            }
            constant = Int(try cursor.readUInt32("sample_size"))
            let countAt = cursor.fileOffset
            count = Int(try cursor.readUInt32("sample_count"))
            table = []
            if constant == 0 {
                guard count <= cursor.remaining / 4 else {
                    throw MediaError(.truncated, field: "sample_count", byteOffset: countAt,
                                     "'stsz' says \(count) samples, it holds sizes for \(cursor.remaining / 4)")
                }
                table.reserveCapacity(count)
                for _ in 0..<count { table.append(Int(try cursor.readUInt32("entry_size"))) }
            } else if count > fileSize / constant {
                warnings.append(MediaError(.mp4SampleTableInconsistent, field: "sample_count", byteOffset: countAt,
                                           "'stsz' says \(count) samples of \(constant) bytes, more than the file's \(fileSize) bytes hold; clamped"))
                count = fileSize / constant
            }
        }

        /// The size of the sample at 0-based `index` (< ``count``).
        func size(of index: Int) -> Int { constant != 0 ? constant : table[index] }

        /// Frees the table.
        mutating func release() { table = [] }
    }
}
