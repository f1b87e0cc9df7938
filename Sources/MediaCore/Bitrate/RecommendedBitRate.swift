/// A starting-point average bit rate for H.264 video of a given size and frame rate.
///
/// The table (for 30 frames per second) follows common practice for live and transcoded
/// H.264 at good quality:
///
/// | pixels per frame (width × height) | bits per second at 30 fps |
/// |---|---|
/// | under 500,000 (e.g. 640×360, 854×480) | 1,500,000 |
/// | under 1,000,000 (e.g. 1280×720) | 3,000,000 |
/// | under 4,000,000 (e.g. 1920×1080) | 6,000,000 |
/// | 4,000,000 or more (e.g. 3840×2160) | 20,000,000 |
///
/// Other frame rates scale the value linearly: 60 fps doubles it, 15 fps halves it.
public enum RecommendedBitRate {
    /// The bits per second the table gives at 30 frames per second for `pixels` per frame.
    ///
    /// - Parameter pixels: width × height of one frame; values below 1 are treated as 1.
    public static func bitsPerSecondAt30FPS(pixels: Int) -> Int {
        switch pixels {
        case ..<500_000: 1_500_000
        case ..<1_000_000: 3_000_000
        case ..<4_000_000: 6_000_000
        default: 20_000_000
        }
    }

    /// The recommended average bit rate in bits per second for frames of `width` × `height`
    /// at `frameRate` frames per second.
    ///
    /// - Parameters:
    ///   - width: the frame width in pixels (at least 1).
    ///   - height: the frame height in pixels (at least 1).
    ///   - frameRate: frames per second, greater than 0 and finite.
    /// - Returns: the table value for 30 fps scaled by `frameRate / 30`, rounded to the
    ///   nearest bit per second.
    /// - Throws: ``MediaError/Code/valueOutOfRange`` for a non-positive size or frame rate, or a
    ///   frame rate that is not finite; ``MediaError/Code/overflow`` when width × height or the
    ///   scaled result does not fit in `Int`.
    public static func bitsPerSecond(width: Int, height: Int, frameRate: Double = 30) throws(MediaError) -> Int {
        guard width > 0 else { throw MediaError(.valueOutOfRange, field: "width", "width \(width) must be at least 1") }
        guard height > 0 else { throw MediaError(.valueOutOfRange, field: "height", "height \(height) must be at least 1") }
        guard frameRate.isFinite, frameRate > 0 else {
            throw MediaError(.valueOutOfRange, field: "frameRate", "frame rate \(frameRate) must be finite and greater than 0")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow else { throw MediaError(.overflow, field: "width × height", "\(width) × \(height) overflows") }
        let scaled = (Double(bitsPerSecondAt30FPS(pixels: pixels)) * frameRate / 30).rounded()
        guard scaled < Double(Int.max) else {
            throw MediaError(.overflow, field: "frameRate", "bit rate at \(frameRate) fps overflows")
        }
        return max(1, Int(scaled))
    }
}
