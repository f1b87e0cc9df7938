import Foundation
import H264
import H264Encoder
import H264TestSupport

/// 720p I420 frames in memory: the 30 frames of `Fixtures/cars_320x240_30f.y4m` (real
/// footage) scaled to 1280 × 720 by nearest neighbour.
enum Frames720p {
    static let width = 1280
    static let height = 720

    /// The cars clip scaled to 1280 × 720 (empty when the fixture cannot be read: `videoFrames()`
    /// then throws `FixtureMissing` naming it, so the suite fails instead of skipping).
    static let frames: [[UInt8]] = {
        guard let clip = try? TestFixtures.y4mFrames(clipPath) else { return [] }
        return clip.frames.map { scale($0[...], from: (clip.width, clip.height), to: (width, height)) }
    }()

    static let clipPath = "cars_320x240_30f.y4m"

    /// The same pictures at 640 × 360 (the size a session switches from).
    static let small: [[UInt8]] = {
        frames.map { scale($0[...], from: (width, height), to: (640, 360)) }
    }()

    static func scale(_ source: ArraySlice<UInt8>, from size: (Int, Int), to target: (Int, Int)) -> [UInt8] {
        let (sw, sh) = size
        let (width, height) = target
        var out = [UInt8](repeating: 0, count: width * height * 3 / 2)
        let base = source.startIndex
        func plane(_ srcOffset: Int, _ srcW: Int, _ srcH: Int, _ dstOffset: Int, _ dstW: Int, _ dstH: Int) {
            for y in 0..<dstH {
                let sy = y * srcH / dstH
                for x in 0..<dstW { out[dstOffset + y * dstW + x] = source[base + srcOffset + sy * srcW + x * srcW / dstW] }
            }
        }
        plane(0, sw, sh, 0, width, height)
        plane(sw * sh, sw / 2, sh / 2, width * height, width / 2, height / 2)
        plane(sw * sh * 5 / 4, sw / 2, sh / 2, width * height * 5 / 4, width / 2, height / 2)
        return out
    }

    static func videoFrames() throws -> [VideoFrame] {
        if frames.isEmpty { _ = try TestFixtures.y4mFrames(clipPath) }   // throws naming the file
        return try frames.map { try VideoFrame(pixelFormat: .i420, width: width, height: height, contiguous: $0) }
    }

    static func smallVideoFrames() throws -> [VideoFrame] {
        try small.map { try VideoFrame(pixelFormat: .i420, width: 640, height: 360, contiguous: $0) }
    }
}
