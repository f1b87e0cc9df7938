import MediaCore

/// A track's defaults for its fragments (`mvex` → `trex`, ISO/IEC 14496-12 §8.8.3).
public struct MP4TrackExtends: Hashable, Sendable {
    /// `track_ID`.
    public var trackID: UInt32
    /// `default_sample_description_index`.
    public var defaultSampleDescriptionIndex: UInt32
    /// `default_sample_duration`.
    public var defaultSampleDuration: UInt32
    /// `default_sample_size`.
    public var defaultSampleSize: UInt32
    /// `default_sample_flags`.
    public var defaultSampleFlags: UInt32

    /// Defaults of their values.
    public init(trackID: UInt32, defaultSampleDescriptionIndex: UInt32 = 1, defaultSampleDuration: UInt32 = 0,
                defaultSampleSize: UInt32 = 0, defaultSampleFlags: UInt32 = 0) {
        self.trackID = trackID
        self.defaultSampleDescriptionIndex = defaultSampleDescriptionIndex
        self.defaultSampleDuration = defaultSampleDuration
        self.defaultSampleSize = defaultSampleSize
        self.defaultSampleFlags = defaultSampleFlags
    }

    /// Reads a `trex`.
    init(_ trex: MP4Box) throws(MediaError) {
        var cursor = trex.cursor
        _ = try cursor.readVersionAndFlags("trex")
        self.init(trackID: try cursor.readUInt32("track_ID"),
                  defaultSampleDescriptionIndex: try cursor.readUInt32("default_sample_description_index"),
                  defaultSampleDuration: try cursor.readUInt32("default_sample_duration"),
                  defaultSampleSize: try cursor.readUInt32("default_sample_size"),
                  defaultSampleFlags: try cursor.readUInt32("default_sample_flags"))
    }

    /// Whether sample flags mark a sync sample: neither `sample_is_non_sync_sample` nor
    /// `sample_depends_on` = 1 (depends on others), as FFmpeg reads them (§8.8.3.1).
    static func isSync(_ flags: UInt32) -> Bool { flags & 0x0101_0000 == 0 }
}

/// Reads a movie fragment (`moof`, §8.8.4) into its tracks' samples: `traf` → `tfhd` (with its
/// flags: base-data-offset, sample-description-index, default duration, size and flags,
/// default-base-is-moof), `tfdt`, and one or more `trun`s (version 0 or 1) with `data_offset`,
/// `first_sample_flags` and per-sample duration, size, flags and composition offset.
enum MP4Fragment {
    /// Appends the samples of `moof` to `tracks` (indexed by `track_ID` through `trackIndex`).
    ///
    /// - Parameters:
    ///   - moof: the box.
    ///   - defaults: the `trex` of each track, by `track_ID`.
    ///   - nextDecodeTime: each track's decoding time after its last sample (where a `traf`
    ///     without `tfdt` continues), updated.
    ///   - fileSize: the file's size; samples past it are dropped with a warning.
    /// - Throws: the errors of the boxes' fields; `truncated` (field `sample_count`) when a `trun`
    ///   says more samples than its bytes hold.
    static func read(_ moof: MP4Box, into tracks: inout [MP4Track], trackIndex: [UInt32: Int], defaults: [UInt32: MP4TrackExtends],
                     nextDecodeTime: inout [UInt32: Int64], fileSize: Int, warnings: inout [MediaError]) throws(MediaError) {
        var previousDataEnd = moof.header.offset
        for traf in try moof.children() where traf.type == "traf" {
            let boxes = try traf.children()
            guard let tfhd = boxes.first(where: { $0.type == "tfhd" }) else {
                throw MediaError(.mp4MissingBox, field: "tfhd", byteOffset: traf.header.offset, "'traf' without 'tfhd'")
            }
            var cursor = tfhd.cursor
            let (_, flags) = try cursor.readVersionAndFlags("tfhd")
            let trackID = try cursor.readUInt32("track_ID")
            guard let index = trackIndex[trackID] else {
                warnings.append(MediaError(.mp4UnknownTrack, field: "track_ID", byteOffset: tfhd.header.payloadOffset + 4,
                                           "a 'traf' of track \(trackID), which the 'moov' does not have; skipped"))
                continue
            }
            let trex = defaults[trackID] ?? MP4TrackExtends(trackID: trackID)
            var base: Int
            if flags & 0x01 != 0 {
                // Clamped to the file's size: a larger one places every sample past the end anyway.
                base = Int(clamping: Swift.min(try cursor.readUInt64("base_data_offset"), UInt64(fileSize)))
            } else if flags & 0x2_0000 != 0 {
                base = moof.header.offset
            } else {
                base = previousDataEnd
            }
            let description = flags & 0x02 != 0 ? try cursor.readUInt32("sample_description_index") : trex.defaultSampleDescriptionIndex
            let defaultDuration = flags & 0x08 != 0 ? try cursor.readUInt32("default_sample_duration") : trex.defaultSampleDuration
            let defaultSize = flags & 0x10 != 0 ? try cursor.readUInt32("default_sample_size") : trex.defaultSampleSize
            let defaultFlags = flags & 0x20 != 0 ? try cursor.readUInt32("default_sample_flags") : trex.defaultSampleFlags
            var decodeTime = nextDecodeTime[trackID] ?? 0
            if let tfdt = boxes.first(where: { $0.type == "tfdt" }) {
                var cursor = tfdt.cursor
                let (version, _) = try cursor.readVersionAndFlags("tfdt")
                decodeTime = version == 1 ? Int64(clamping: try cursor.readUInt64("baseMediaDecodeTime"))
                    : Int64(try cursor.readUInt32("baseMediaDecodeTime"))
            }
            let isVideo = tracks[index].handlerType == "vide"
            var dataOffset = base
            for trun in boxes where trun.type == "trun" {
                var cursor = trun.cursor
                let (version, runFlags) = try cursor.readVersionAndFlags("trun")
                let countAt = cursor.fileOffset
                var count = Int(try cursor.readUInt32("sample_count"))
                if runFlags & 0x01 != 0 { dataOffset = base + Int(try cursor.readInt32("data_offset")) }
                let firstFlags = runFlags & 0x04 != 0 ? try cursor.readUInt32("first_sample_flags") : nil
                let perSample = [0x100, 0x200, 0x400, 0x800].filter { runFlags & $0 != 0 }.count * 4
                if perSample > 0 {
                    guard count <= cursor.remaining / perSample else {
                        throw MediaError(.truncated, field: "sample_count", byteOffset: countAt,
                                         "'trun' says \(count) samples of \(perSample) bytes, it holds \(cursor.remaining / perSample)")
                    }
                } else if count > fileSize {
                    warnings.append(MediaError(.mp4SampleTableInconsistent, field: "sample_count", byteOffset: countAt,
                                               "'trun' says \(count) samples, more than the file's \(fileSize) bytes hold; clamped"))
                    count = fileSize
                }
                for number in 0..<count {
                    let duration = runFlags & 0x100 != 0 ? try cursor.readUInt32("sample_duration") : defaultDuration
                    let size = Int(runFlags & 0x200 != 0 ? try cursor.readUInt32("sample_size") : defaultSize)
                    var sampleFlags = runFlags & 0x400 != 0 ? try cursor.readUInt32("sample_flags") : defaultFlags
                    if number == 0, let firstFlags { sampleFlags = firstFlags }
                    var composition: Int64 = 0
                    if runFlags & 0x800 != 0 {
                        let raw = try cursor.readUInt32("sample_composition_time_offset")
                        composition = version == 0 ? Int64(raw) : Int64(Int32(bitPattern: raw))
                    }
                    guard dataOffset >= 0, dataOffset <= fileSize, size <= fileSize - dataOffset else {
                        warnings.append(MediaError(.mp4SamplePastEnd, field: "data_offset", byteOffset: trun.header.offset,
                                                   "a sample of \(size) bytes at \(dataOffset) ends past the file's \(fileSize) bytes; the rest of the run is dropped"))
                        break
                    }
                    tracks[index].samples.append(MP4Sample(offset: dataOffset, size: size, decodeTime: decodeTime,
                                                           compositionOffset: composition,
                                                           isSync: !isVideo || MP4TrackExtends.isSync(sampleFlags),
                                                           descriptionIndex: Int(description)))
                    dataOffset += size
                    decodeTime &+= Int64(duration)
                }
            }
            previousDataEnd = dataOffset
            nextDecodeTime[trackID] = decodeTime
            tracks[index].duration = Swift.max(tracks[index].duration, decodeTime)
        }
    }
}
