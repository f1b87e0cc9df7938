/// Time in a track's `timescale` (ISO/IEC 14496-12 §8.4.2 `mdhd.timescale`): ticks of
/// 1/timescale second.
enum MP4Time {
    /// `duration` in ticks of 1/`timescale` s, rounded to the nearest tick (exact for any
    /// timescale: the attoseconds are multiplied in 128 bits).
    static func ticks(_ duration: Duration, timescale: Int) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let scaled = Int128(attoseconds) * Int128(timescale)
        let quantum = Int128(1_000_000_000_000_000_000)
        // Round half away from zero.
        let fraction = scaled >= 0 ? (scaled + quantum / 2) / quantum : (scaled - quantum / 2) / quantum
        return seconds * Int64(timescale) + Int64(fraction)
    }

    /// `ticks` of one timescale in another, rounded to the nearest.
    static func rescale(_ ticks: Int64, from source: Int, to target: Int) -> Int64 {
        guard source != target else { return ticks }
        let product = Int128(ticks) * Int128(target)
        let half = Int128(source / 2)
        return Int64(product >= 0 ? (product + half) / Int128(source) : (product - half) / Int128(source))
    }
}
