public import MediaCore
/// The format of an H.264 stream: its parameter sets and NAL unit length size — what
/// VideoToolbox calls a `CMVideoFormatDescription`.
///
/// Two frames belong to the same format exactly when their format descriptions are equal.
public struct FormatDescription: Hashable, Sendable {
    /// The record, held by one reference: a format description travels with every access unit
    /// and frame, and copying one then retains one object rather than each parameter set list.
    private final class Storage: Sendable {
        package let configurationRecord: AVCDecoderConfigurationRecord
        package init(_ configurationRecord: AVCDecoderConfigurationRecord) { self.configurationRecord = configurationRecord }
    }

    private let storage: Storage

    /// The configuration record (parameter sets, profile, level, length size).
    public var configurationRecord: AVCDecoderConfigurationRecord { storage.configurationRecord }

    /// Creates a description from a configuration record.
    public init(configurationRecord: AVCDecoderConfigurationRecord) {
        self.storage = Storage(configurationRecord)
    }

    /// True when both describe the same configuration record.
    public static func == (lhs: FormatDescription, rhs: FormatDescription) -> Bool {
        lhs.storage === rhs.storage || lhs.configurationRecord == rhs.configurationRecord
    }

    /// Hashes the configuration record.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(configurationRecord)
    }

    /// Creates a description from parameter set NAL units (each with its header byte).
    ///
    /// Profile, compatibility and level come from the first SPS.
    ///
    /// - Throws: `MediaError.Code.missingParameterSet` when there is no SPS or no PPS;
    ///   `MediaError.Code.truncated` when the first SPS is shorter than 4 bytes.
    public init(sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]], nalUnitLengthSize: Int = 4) throws(MediaError) {
        self.init(configurationRecord: try AVCDecoderConfigurationRecord(
            sequenceParameterSets: sequenceParameterSets, pictureParameterSets: pictureParameterSets,
            nalUnitLengthSize: nalUnitLengthSize))
    }

    /// The sequence parameter set NAL units.
    public var sequenceParameterSets: [[UInt8]] { configurationRecord.sequenceParameterSets }
    /// The picture parameter set NAL units.
    public var pictureParameterSets: [[UInt8]] { configurationRecord.pictureParameterSets }
    /// The length of each NAL unit length prefix in AVCC data of this format.
    public var nalUnitLengthSize: Int { configurationRecord.nalUnitLengthSize }

    /// The first sequence parameter set, parsed; nil when there is none or it does not parse.
    public var sequenceParameterSet: SequenceParameterSet? {
        sequenceParameterSets.first.flatMap { try? SequenceParameterSet(nalUnit: $0) }
    }

    /// The display size in luma samples (coded size less cropping, clause 7.4.2.1.1) of the first
    /// SPS; `(0, 0)` when it cannot be parsed.
    public var dimensions: (width: Int, height: Int) {
        guard let sps = sequenceParameterSet else { return (0, 0) }
        return (sps.displayWidth, sps.displayHeight)
    }

    /// The `avcC` payload bytes.
    public var avcC: [UInt8] {
        // A record built by this type's initialisers always serialises (counts are checked there).
        (try? configurationRecord.serialized()) ?? []
    }
}

extension AVCDecoderConfigurationRecord {
    /// Creates a record from parameter set NAL units, taking profile, compatibility and level from
    /// the first SPS and, for High profiles, the extension's chroma format and bit depths from the
    /// parsed SPS.
    ///
    /// - Throws: `MediaError.Code.missingParameterSet` without an SPS or PPS,
    ///   `MediaError.Code.truncated` for an SPS shorter than 4 bytes.
    public init(sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]], nalUnitLengthSize: Int = 4) throws(MediaError) {
        guard let sps = sequenceParameterSets.first else {
            throw MediaError(.missingParameterSet, field: "sequenceParameterSets", "no SPS")
        }
        guard !pictureParameterSets.isEmpty else {
            throw MediaError(.missingParameterSet, field: "pictureParameterSets", "no PPS")
        }
        guard sps.count >= 4 else {
            throw MediaError(.truncated, field: "sequenceParameterSet", "SPS of \(sps.count) bytes has no profile and level")
        }
        let profile = sps[1]
        var ext: HighProfileExtension?
        if Self.profileHasExtension(profile) {
            // An SPS that does not parse keeps the 4:2:0 8-bit defaults.
            let parsed = try? SequenceParameterSet(nalUnit: sps)
            ext = HighProfileExtension(chromaFormat: UInt8(parsed?.chromaFormatIdc ?? 1),
                                       bitDepthLumaMinus8: UInt8(parsed?.bitDepthLumaMinus8 ?? 0),
                                       bitDepthChromaMinus8: UInt8(parsed?.bitDepthChromaMinus8 ?? 0))
        }
        try self.init(avcProfileIndication: profile, profileCompatibility: sps[2], avcLevelIndication: sps[3],
                      nalUnitLengthSize: nalUnitLengthSize, sequenceParameterSets: sequenceParameterSets,
                      pictureParameterSets: pictureParameterSets, highProfileExtension: ext)
    }
}
