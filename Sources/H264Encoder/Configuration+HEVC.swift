import H264

extension EncoderConfiguration {
    /// H.265 profiles the encoder can produce (Annex A.3).
    public enum HEVCProfile: String, Hashable, Sendable, CaseIterable {
        /// Main (A.3.2): 8-bit 4:2:0. 10-bit frames are rounded to 8 bits.
        case main
        /// Main 10 (A.3.3): 4:2:0 with 8- or 10-bit samples; x265's 10-bit build encodes it
        /// (8-bit frames are shifted up).
        case main10

        /// The `general_profile_idc` this profile is signalled with.
        public var generalProfileIdc: Int {
            switch self {
            case .main: 1
            case .main10: 2
            }
        }

        /// The bits per sample the stream carries.
        public var bitDepth: Int { self == .main10 ? 10 : 8 }
    }

    /// The `general_level_idc` values of H.265 Table A.8 (30 × the level number: 93 for 3.1)
    /// are not what ``Level/fixed(_:)`` takes: for H.265, as for H.264, it takes 10 × the level
    /// number (31 for level 3.1, as x265's `--level-idc`), one of these.
    public static let validHEVCLevels: Set<Int> = [10, 20, 21, 30, 31, 40, 41, 50, 51, 52, 60, 61, 62]

    /// The error for ``codec`` `.hevc` in a build without the package trait `HEVCEncoding`.
    static var hevcEncodingNotBuilt: MediaError {
        MediaError(.unsupported, field: "codec",
                  "H.265 encoding is not in this build: enable swift-h264's package trait HEVCEncoding (needs libx265)")
    }

    /// The checks that depend on ``codec``.
    func validateCodec() throws(MediaError) {
        guard codec == .hevc else { return }
        #if !HEVCEncoding
        throw Self.hevcEncodingNotBuilt
        #else
        if case .fixed(let level) = level, !Self.validHEVCLevels.contains(level) {
            throw MediaError(.invalidConfiguration, field: "level", "\(level) is not an H.265 level (10 × the level number, Table A.8)")
        }
        if entropyMode == .cavlc {
            throw MediaError(.invalidConfiguration, field: "entropyMode", "H.265 has no CAVLC: it always codes with CABAC")
        }
        if let tune = tune, tune == .film || tune == .stillimage {
            throw MediaError(.invalidConfiguration, field: "tune", "x265 has no tune \(tune.rawValue)")
        }
        #endif
    }
}
