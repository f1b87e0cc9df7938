public import MediaCore
/// An `AVCDecoderConfigurationRecord` — the `avcC` box payload of ISO/IEC 14496-15 clause 5.3.3.
///
/// It carries the parameter sets and the size of the NAL unit length prefix for AVCC
/// (length-prefixed) streams, as MP4 files and VideoToolbox's format descriptions do.
public struct AVCDecoderConfigurationRecord: Hashable, Sendable {
    /// The High-profile extension (chroma format, bit depths, SPS extensions).
    ///
    /// ISO/IEC 14496-15 names profiles 100, 110, 122 and 144; like FFmpeg, this type writes and
    /// reads it for every profile other than Baseline (66), Main (77) and Extended (88), so that
    /// High 4:4:4 (244) and the other high profiles keep their chroma format and bit depths.
    public struct HighProfileExtension: Hashable, Sendable {
        /// `chroma_format` (= the SPS's `chroma_format_idc`), 0…3.
        public var chromaFormat: UInt8
        /// `bit_depth_luma_minus8`, 0…7.
        public var bitDepthLumaMinus8: UInt8
        /// `bit_depth_chroma_minus8`, 0…7.
        public var bitDepthChromaMinus8: UInt8
        /// Sequence parameter set extension NAL units (type 13).
        public var sequenceParameterSetExtensions: [[UInt8]]

        /// Creates an extension.
        public init(chromaFormat: UInt8 = 1, bitDepthLumaMinus8: UInt8 = 0, bitDepthChromaMinus8: UInt8 = 0,
                    sequenceParameterSetExtensions: [[UInt8]] = []) {
            self.chromaFormat = chromaFormat
            self.bitDepthLumaMinus8 = bitDepthLumaMinus8
            self.bitDepthChromaMinus8 = bitDepthChromaMinus8
            self.sequenceParameterSetExtensions = sequenceParameterSetExtensions
        }
    }

    /// `configurationVersion`: always 1.
    public var configurationVersion: UInt8 = 1
    /// `AVCProfileIndication`: the `profile_idc` of the SPS.
    public var avcProfileIndication: UInt8
    /// `profile_compatibility`: the byte of constraint flags following `profile_idc` in the SPS.
    public var profileCompatibility: UInt8
    /// `AVCLevelIndication`: the `level_idc` of the SPS.
    public var avcLevelIndication: UInt8
    /// `lengthSizeMinusOne`: 0, 1 or 3 (length prefixes of 1, 2 or 4 bytes).
    public var lengthSizeMinusOne: UInt8
    /// The sequence parameter set NAL units, each with its header byte.
    public var sequenceParameterSets: [[UInt8]]
    /// The picture parameter set NAL units, each with its header byte.
    public var pictureParameterSets: [[UInt8]]
    /// The High-profile extension, when present.
    public var highProfileExtension: HighProfileExtension?

    /// The size of each NAL unit length prefix in bytes: `lengthSizeMinusOne + 1`.
    public var nalUnitLengthSize: Int { Int(lengthSizeMinusOne) + 1 }

    /// True for the profiles whose record carries the High-profile extension: every profile but
    /// Baseline (66), Main (77) and Extended (88), as FFmpeg writes and reads it.
    public static func profileHasExtension(_ profileIdc: UInt8) -> Bool {
        profileIdc != 66 && profileIdc != 77 && profileIdc != 88
    }

    /// Creates a record from its fields.
    public init(avcProfileIndication: UInt8, profileCompatibility: UInt8, avcLevelIndication: UInt8,
                nalUnitLengthSize: Int = 4, sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]],
                highProfileExtension: HighProfileExtension? = nil) throws(MediaError) {
        try AVCC.validate(lengthSize: nalUnitLengthSize)
        self.avcProfileIndication = avcProfileIndication
        self.profileCompatibility = profileCompatibility
        self.avcLevelIndication = avcLevelIndication
        self.lengthSizeMinusOne = UInt8(nalUnitLengthSize - 1)
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
        self.highProfileExtension = highProfileExtension
    }

    /// Parses a record.
    ///
    /// Parsing is as lenient as FFmpeg's where real files differ from the standard: reserved bits
    /// are not checked, and a High-profile record that ends after its PPS simply has no extension.
    ///
    /// - Throws: `MediaError.Code.invalidConfigurationRecord` for a version other than 1 or a
    ///   length size of 3 (`MediaError.Code.invalidLengthSize`), `MediaError.Code.truncated`
    ///   when a count or length runs past the end, `MediaError.Code.emptyNALUnit` for a
    ///   zero-length parameter set.
    public init<Bytes: Collection<UInt8>>(parsing data: Bytes) throws(MediaError) {
        let bytes = Array(data)
        var position = 0
        func byte(_ field: String) throws(MediaError) -> UInt8 {
            guard position < bytes.count else {
                throw MediaError(.truncated, field: field, byteOffset: position, "avcC ends before \(field)")
            }
            defer { position += 1 }
            return bytes[position]
        }
        func nalUnits(count: Int, _ field: String) throws(MediaError) -> [[UInt8]] {
            var units: [[UInt8]] = []
            units.reserveCapacity(count)
            for index in 0..<count {
                let lengthAt = position
                let length = Int(try byte("\(field)Length[\(index)]")) << 8 | Int(try byte("\(field)Length[\(index)]"))
                guard length > 0 else {
                    throw MediaError(.emptyNALUnit, field: "\(field)Length[\(index)]", byteOffset: lengthAt, "zero-length parameter set")
                }
                guard length <= bytes.count - position else {
                    throw MediaError(.truncated, field: "\(field)NALUnit[\(index)]", byteOffset: lengthAt,
                                    "length \(length) runs past the end of the avcC (\(bytes.count - position) bytes left)")
                }
                units.append(Array(bytes[position..<position + length]))
                position += length
            }
            return units
        }

        let version = try byte("configurationVersion")
        guard version == 1 else {
            throw MediaError(.invalidConfigurationRecord, field: "configurationVersion", byteOffset: 0, "configurationVersion is \(version), not 1")
        }
        avcProfileIndication = try byte("AVCProfileIndication")
        profileCompatibility = try byte("profile_compatibility")
        avcLevelIndication = try byte("AVCLevelIndication")
        lengthSizeMinusOne = try byte("lengthSizeMinusOne") & 0x03
        do throws(MediaError) {
            try AVCC.validate(lengthSize: Int(lengthSizeMinusOne) + 1)
        } catch {
            throw error.offset(by: 4)
        }
        let spsCount = Int(try byte("numOfSequenceParameterSets") & 0x1F)
        sequenceParameterSets = try nalUnits(count: spsCount, "sequenceParameterSet")
        let ppsCount = Int(try byte("numOfPictureParameterSets"))
        pictureParameterSets = try nalUnits(count: ppsCount, "pictureParameterSet")
        if Self.profileHasExtension(avcProfileIndication) && bytes.count - position >= 4 {
            let chroma = try byte("chroma_format") & 0x03
            let luma = try byte("bit_depth_luma_minus8") & 0x07
            let chromaDepth = try byte("bit_depth_chroma_minus8") & 0x07
            let extCount = Int(try byte("numOfSequenceParameterSetExt"))
            let exts = try nalUnits(count: extCount, "sequenceParameterSetExt")
            highProfileExtension = HighProfileExtension(chromaFormat: chroma, bitDepthLumaMinus8: luma,
                                                        bitDepthChromaMinus8: chromaDepth, sequenceParameterSetExtensions: exts)
        } else {
            highProfileExtension = nil
        }
    }

    /// The record serialised as `avcC` box payload bytes.
    ///
    /// - Throws: `MediaError.Code.valueOutOfRange` when there are more than 31 SPS, more than
    ///   255 PPS or SPS extensions, or a parameter set longer than 65,535 bytes.
    public func serialized() throws(MediaError) -> [UInt8] {
        guard sequenceParameterSets.count <= 31 else {
            throw MediaError(.valueOutOfRange, field: "numOfSequenceParameterSets", "\(sequenceParameterSets.count) SPS; at most 31 fit")
        }
        guard pictureParameterSets.count <= 255 else {
            throw MediaError(.valueOutOfRange, field: "numOfPictureParameterSets", "\(pictureParameterSets.count) PPS; at most 255 fit")
        }
        var out: [UInt8] = [configurationVersion, avcProfileIndication, profileCompatibility, avcLevelIndication,
                            0xFC | (lengthSizeMinusOne & 3), 0xE0 | UInt8(sequenceParameterSets.count)]
        func append(_ units: [[UInt8]], _ field: String) throws(MediaError) {
            for unit in units {
                guard unit.count <= 0xFFFF else {
                    throw MediaError(.valueOutOfRange, field: field, "a parameter set of \(unit.count) bytes does not fit a 16-bit length")
                }
                out.append(UInt8(unit.count >> 8))
                out.append(UInt8(unit.count & 0xFF))
                out.append(contentsOf: unit)
            }
        }
        try append(sequenceParameterSets, "sequenceParameterSetLength")
        out.append(UInt8(pictureParameterSets.count))
        try append(pictureParameterSets, "pictureParameterSetLength")
        if let ext = highProfileExtension {
            guard ext.sequenceParameterSetExtensions.count <= 255 else {
                throw MediaError(.valueOutOfRange, field: "numOfSequenceParameterSetExt", "too many SPS extensions")
            }
            out.append(0xFC | (ext.chromaFormat & 3))
            out.append(0xF8 | (ext.bitDepthLumaMinus8 & 7))
            out.append(0xF8 | (ext.bitDepthChromaMinus8 & 7))
            out.append(UInt8(ext.sequenceParameterSetExtensions.count))
            try append(ext.sequenceParameterSetExtensions, "sequenceParameterSetExtLength")
        }
        return out
    }
}

// MARK: - Building a record from what was read

extension AVCDecoderConfigurationRecord {
    /// Reads codec extradata in either form found in the wild: an `avcC` record (first byte 1,
    /// the `configurationVersion`), or Annex-B parameter sets (anything else), as FFmpeg's
    /// `ff_h264_decode_extradata` decides.
    ///
    /// From Annex-B extradata the SPS, PPS and SPS extension NAL units are taken (other NAL
    /// units are ignored) and a record is built from them with a 4-byte length size; profile,
    /// compatibility and level come from the first SPS.
    ///
    /// - Throws: the errors of `init(parsing:)` for an `avcC`; for Annex-B,
    ///   `MediaError.Code.missingStartCode` when it does not begin with a start code and
    ///   `MediaError.Code.missingParameterSet` without an SPS or PPS; `MediaError.Code.truncated`
    ///   for empty extradata.
    public init(extradata: [UInt8]) throws(MediaError) {
        guard let first = extradata.first else {
            throw MediaError(.truncated, field: "extradata", byteOffset: 0, "empty extradata")
        }
        if first == 1 {
            try self.init(parsing: extradata)
            return
        }
        let units = try AnnexB.nalUnits(validating: extradata)
        guard !units.isEmpty else {
            throw MediaError(.missingStartCode, field: "extradata", byteOffset: 0, "extradata is neither avcC nor Annex-B")
        }
        let converted = try AVCC.fromAnnexB(extradata, lengthSize: 4, parameterSets: .configuration)
        self = try converted.configurationRecord()
    }
}

extension AVCC.ConversionResult {
    /// A configuration record holding the parameter sets found, with this length size.
    ///
    /// - Throws: `MediaError.Code.missingParameterSet` without an SPS or a PPS.
    public func configurationRecord() throws(MediaError) -> AVCDecoderConfigurationRecord {
        var record = try AVCDecoderConfigurationRecord(sequenceParameterSets: sequenceParameterSets,
                                                       pictureParameterSets: pictureParameterSets,
                                                       nalUnitLengthSize: lengthSize)
        if !sequenceParameterSetExtensions.isEmpty {
            var ext = record.highProfileExtension ?? .init()
            ext.sequenceParameterSetExtensions = sequenceParameterSetExtensions
            record.highProfileExtension = ext
        }
        return record
    }
}
