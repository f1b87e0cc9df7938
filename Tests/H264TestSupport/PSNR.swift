import Foundation

/// The one PSNR of the tests: over all planes of all frames (8-bit samples), from the mean
/// squared error; 99 for identical frames, 0 when there is nothing to compare.
public func psnr(_ a: [[UInt8]], _ b: [[UInt8]]) -> Double {
    var sum = 0.0, count = 0
    for (x, y) in zip(a, b) {
        for i in 0..<min(x.count, y.count) {
            let d = Double(Int(x[i]) - Int(y[i]))
            sum += d * d
        }
        count += min(x.count, y.count)
    }
    guard count > 0 else { return 0 }
    let mse = sum / Double(count)
    return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
}

/// PSNR of the first `count` samples of two 8-bit planes (a frame's luma, say).
public func psnr(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>, count: Int) -> Double {
    psnr([Array(a.prefix(count))], [Array(b.prefix(count))])
}
