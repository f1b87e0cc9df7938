public import H264

/// Settings from their names, for code that reads them as text (a command line, a config file).
extension EncoderConfiguration {
    /// Sets the profile of ``codec`` from its name: `baseline`, `main` or `high` into ``profile``
    /// for H.264; `main` or `main10` into ``hevcProfile`` for H.265.
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration` (field `profile`) for a name the codec
    ///   has no profile of, listing those it has.
    public mutating func setProfile(named name: String) throws(MediaError) {
        switch codec {
        case .h264:
            guard let value = Profile(rawValue: name) else { throw Self.unknown(name, Profile.allCases.map(\.rawValue)) }
            profile = value
        case .hevc:
            guard let value = HEVCProfile(rawValue: name) else { throw Self.unknown(name, HEVCProfile.allCases.map(\.rawValue)) }
            hevcProfile = value
        }
    }

    private static func unknown(_ name: String, _ names: [String]) -> MediaError {
        MediaError(.invalidConfiguration, field: "profile", "unknown profile \(name) (\(names.joined(separator: ", ")))")
    }
}

extension EncoderConfiguration.DataRateLimit {
    /// A limit written `BYTES:SECONDS` (`125000:1` is 125,000 bytes in any second).
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration` (field `dataRateLimits`) when the text
    ///   is not two numbers around a colon.
    public init(parsing text: String) throws(MediaError) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let bytes = Int(parts[0]), let seconds = Double(parts[1]) else {
            throw MediaError(.invalidConfiguration, field: "dataRateLimits", "bad data-rate limit \(text) (BYTES:SECONDS)")
        }
        self.init(bytes: bytes, seconds: seconds)
    }
}
