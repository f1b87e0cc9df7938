/// What storing a parameter set in a cache did (H.264's `ParameterSetCache`, H.265's
/// `HEVCParameterSetCache`).
public enum ParameterSetChange: Hashable, Sendable {
    /// The id was new.
    case added
    /// The same bytes were already stored under this id.
    case unchanged
    /// Different bytes were stored under this id and were replaced.
    case replaced
}
