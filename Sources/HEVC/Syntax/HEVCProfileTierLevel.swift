public import MediaCore

/// `profile_tier_level(profilePresentFlag, maxNumSubLayersMinus1)` (ITU-T H.265 clause 7.3.3,
/// semantics 7.4.4): the general profile, tier and level, and those of each sub-layer that
/// signals its own.
public struct HEVCProfileTierLevel: Hashable, Sendable {
    /// The profile fields of the general layer or of one sub-layer.
    public struct Profile: Hashable, Sendable {
        /// `*_profile_space`, 0 in conforming streams (another value is kept with a warning).
        public let profileSpace: Int
        /// `*_tier_flag`: false for the Main tier, true for the High tier.
        public let tierFlag: Bool
        /// `*_profile_idc` (Annex A): 1 Main, 2 Main 10, 3 Main Still Picture, 4 format range
        /// extensions, 9 screen content coding.
        public let profileIdc: Int
        /// `*_profile_compatibility_flag[j]` for j = 0…31, flag 0 in the highest bit (the order
        /// of the `hvcC` record).
        public let profileCompatibilityFlags: UInt32
        /// The 48 bits from `*_progressive_source_flag` to `*_inbld_flag` (or the reserved bit in
        /// its place), first bit highest: the `hvcC` record's constraint indicator flags.
        public let constraintIndicatorFlags: UInt64

        /// `*_profile_compatibility_flag[j]`.
        public func isCompatible(with j: Int) -> Bool {
            j >= 0 && j < 32 && profileCompatibilityFlags & (1 << UInt32(31 - j)) != 0
        }

        /// `*_progressive_source_flag`.
        public var progressiveSourceFlag: Bool { constraintIndicatorFlags >> 47 & 1 == 1 }
        /// `*_interlaced_source_flag`.
        public var interlacedSourceFlag: Bool { constraintIndicatorFlags >> 46 & 1 == 1 }
        /// `*_non_packed_constraint_flag`.
        public var nonPackedConstraintFlag: Bool { constraintIndicatorFlags >> 45 & 1 == 1 }
        /// `*_frame_only_constraint_flag`.
        public var frameOnlyConstraintFlag: Bool { constraintIndicatorFlags >> 44 & 1 == 1 }

        /// Whether the profile is `x` or declares compatibility with it (`profile_compatible(x)`).
        func compatible(_ x: Int) -> Bool { profileIdc == x || isCompatible(with: x) }

        /// Reads the profile fields; `prefix` is `general` or `sub_layer`, `index` empty or `[i]`.
        init(reader: inout BitReader, prefix: String, index: String) throws(MediaError) {
            profileSpace = try reader.readBits(2, "\(prefix)_profile_space\(index)", tolerating: { $0 == 0 }, "0")
            tierFlag = try reader.readFlag("\(prefix)_tier_flag\(index)")
            profileIdc = try reader.readBits(5, "\(prefix)_profile_idc\(index)")
            var compatibility: UInt32 = 0
            for j in 0..<32 {
                let bit = try reader.readBits(1, "\(prefix)_profile_compatibility_flag\(index)[\(j)]")
                compatibility |= UInt32(bit) << UInt32(31 - j)
            }
            profileCompatibilityFlags = compatibility
            var flags: UInt64 = 0
            // One field of the 48 constraint bits, appended to `flags`.
            func field(_ count: Int, _ name: String, reserved: Bool = false) throws(MediaError) {
                let value = reserved ? try reader.readReservedZero(count, "\(prefix)_\(name)")
                                     : UInt64(try reader.readBits(count, "\(prefix)_\(name)\(index)"))
                flags = flags << UInt64(count) | value
            }
            for name in ["progressive_source_flag", "interlaced_source_flag", "non_packed_constraint_flag",
                         "frame_only_constraint_flag"] {
                try field(1, name)
            }
            let probe = Profile(profileIdc: profileIdc, compatibility: compatibility)
            if [4, 5, 6, 7, 8, 9, 10, 11].contains(where: probe.compatible) {
                for name in ["max_12bit_constraint_flag", "max_10bit_constraint_flag", "max_8bit_constraint_flag",
                             "max_422chroma_constraint_flag", "max_420chroma_constraint_flag",
                             "max_monochrome_constraint_flag", "intra_constraint_flag",
                             "one_picture_only_constraint_flag", "lower_bit_rate_constraint_flag"] {
                    try field(1, name)
                }
                if [5, 9, 10, 11].contains(where: probe.compatible) {
                    try field(1, "max_14bit_constraint_flag")
                    try field(33, "reserved_zero_33bits", reserved: true)
                } else {
                    try field(34, "reserved_zero_34bits", reserved: true)
                }
            } else if probe.compatible(2) {
                try field(7, "reserved_zero_7bits", reserved: true)
                try field(1, "one_picture_only_constraint_flag")
                try field(35, "reserved_zero_35bits", reserved: true)
            } else {
                try field(43, "reserved_zero_43bits", reserved: true)
            }
            if [1, 2, 3, 4, 5, 9, 11].contains(where: probe.compatible) {
                try field(1, "inbld_flag")
            } else {
                try field(1, "reserved_zero_bit", reserved: true)
            }
            constraintIndicatorFlags = flags
        }

        /// The fields that decide which constraint flags follow.
        private init(profileIdc: Int, compatibility: UInt32) {
            profileSpace = 0
            tierFlag = false
            self.profileIdc = profileIdc
            profileCompatibilityFlags = compatibility
            constraintIndicatorFlags = 0
        }
    }

    /// The general profile; nil when `profilePresentFlag` is 0.
    public let general: Profile?
    /// `general_level_idc`: thirty times the level number (Table A.8; 93 is level 3.1).
    public let generalLevelIdc: Int
    /// `sub_layer_profile_present_flag[i]` for each sub-layer below the highest.
    public let subLayerProfilePresentFlag: [Bool]
    /// `sub_layer_level_present_flag[i]` for each sub-layer below the highest.
    public let subLayerLevelPresentFlag: [Bool]
    /// Each sub-layer's profile, nil where `sub_layer_profile_present_flag[i]` is 0.
    public let subLayerProfiles: [Profile?]
    /// Each sub-layer's `sub_layer_level_idc[i]`, nil where `sub_layer_level_present_flag[i]` is 0.
    public let subLayerLevelIdc: [Int?]

    /// Reads `profile_tier_level(profilePresentFlag, maxNumSubLayersMinus1)`;
    /// `maxNumSubLayersMinus1` is 0…6 (checked by the caller).
    init(reader: inout BitReader, profilePresentFlag: Bool, maxNumSubLayersMinus1: Int) throws(MediaError) {
        general = profilePresentFlag ? try Profile(reader: &reader, prefix: "general", index: "") : nil
        generalLevelIdc = try reader.readBits(8, "general_level_idc")
        var profilePresent: [Bool] = [], levelPresent: [Bool] = []
        for i in 0..<maxNumSubLayersMinus1 {
            profilePresent.append(try reader.readFlag("sub_layer_profile_present_flag[\(i)]"))
            levelPresent.append(try reader.readFlag("sub_layer_level_present_flag[\(i)]"))
        }
        if maxNumSubLayersMinus1 > 0 {
            for _ in maxNumSubLayersMinus1..<8 { _ = try reader.readReservedZero(2, "reserved_zero_2bits") }
        }
        var profiles: [Profile?] = [], levels: [Int?] = []
        for i in 0..<maxNumSubLayersMinus1 {
            profiles.append(profilePresent[i] ? try Profile(reader: &reader, prefix: "sub_layer", index: "[\(i)]") : nil)
            levels.append(levelPresent[i] ? try reader.readBits(8, "sub_layer_level_idc[\(i)]") : nil)
        }
        subLayerProfilePresentFlag = profilePresent
        subLayerLevelPresentFlag = levelPresent
        subLayerProfiles = profiles
        subLayerLevelIdc = levels
    }
}
