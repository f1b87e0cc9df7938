import H264
import MediaContainers
import H264TestSupport
import Testing

/// One parser for the y4m header's `W`, `H`, `F` and for raw input's `--size` and `--fps`: the
/// same text is accepted or refused, with the same code, whichever way it comes in.
@Suite(.ownThread) struct SizeAndRateTests {
    /// (y4m F value, --fps value, expected rate or nil for refused)
    static let rates: [(y4m: String, fps: String, expected: (Int, Int)?)] = [
        ("30:1", "30/1", (30, 1)),
        ("30000:1001", "30000/1001", (30000, 1001)),
        ("1:10", "1/10", (1, 10)),         // 0.1 fps, the lowest
        ("1000:1", "1000/1", (1000, 1)),   // the highest
        ("1:11", "1/11", nil),             // below 0.1 fps
        ("1001:1", "1001/1", nil),         // above 1000 fps
        ("0:1", "0/1", nil),
        ("30:0", "30/0", nil),
        ("-30:1", "-30/1", nil),
        ("30", "30:1", nil),               // each form's own separator only
        ("30:1:1", "30/1/1", nil),
    ]

    @Test(arguments: rates.indices)
    func y4mAndFPSShareTheRateRule(index: Int) throws {
        let row = Self.rates[index]
        let header = Result { () throws(MediaError) in try Y4MHeader.parse(Array("YUV4MPEG2 W16 H8 F\(row.y4m)".utf8)) }
        let fps = Result { () throws(MediaError) in try SizeAndRate.rate(Substring(row.fps), separator: "/", decimal: true, field: "--fps", "--fps ") }
        if let (n, d) = row.expected {
            let parsed = try header.get()
            #expect(parsed.frameRateNumerator == n && parsed.frameRateDenominator == d, "F\(row.y4m)")
            let rate = try fps.get()
            #expect(rate.numerator == n && rate.denominator == d, "--fps \(row.fps)")
        } else {
            #expect(throws: MediaError.self) { try header.get() }
            #expect(throws: MediaError.self) { try fps.get() }
            if case .failure(let error) = header { #expect(error.code == .badFrameRate, "F\(row.y4m): \(error)") }
            if case .failure(let error) = fps { #expect(error.code == .badFrameRate, "--fps \(row.fps): \(error)") }
        }
    }

    /// `--fps` also takes a number: whole, or kept to thousandths.
    @Test func fpsAsANumber() throws {
        #expect(try SizeAndRate.rate("25", separator: "/", decimal: true, field: "--fps", "--fps ") == FrameRate(numerator: 25, denominator: 1))
        #expect(try SizeAndRate.rate("29.97", separator: "/", decimal: true, field: "--fps", "--fps ") == FrameRate(numerator: 29970, denominator: 1000))
        #expect((#expect(throws: MediaError.self) { try SizeAndRate.rate("0.05", separator: "/", decimal: true, field: "--fps", "--fps ") })?.code == .badFrameRate)
        #expect((#expect(throws: MediaError.self) { try SizeAndRate.rate("nan", separator: "/", decimal: true, field: "--fps", "--fps ") })?.code == .badFrameRate)
    }

    /// (W, H) as y4m fields and as `--size WxH`: accepted alike, refused alike.
    @Test(arguments: [("16", "8", true), ("16384", "2", true), ("15", "8", false), ("16", "7", false),
                      ("0", "8", false), ("16386", "8", false), ("-16", "8", false), ("a", "8", false)])
    func y4mAndSizeShareTheSizeRule(width: String, height: String, accepted: Bool) throws {
        let header = Result { () throws(MediaError) in try Y4MHeader.parse(Array("YUV4MPEG2 W\(width) H\(height)".utf8)) }
        let size = Result { () throws(MediaError) in try SizeAndRate.size("\(width)x\(height)") }
        if accepted {
            #expect(try header.get().width == Int(width) && header.get().height == Int(height))
            #expect(try size.get() == (Int(width)!, Int(height)!))
        } else {
            if case .failure(let error) = header { #expect(error.code == .badDimension, "\(error)") } else { Issue.record("W\(width) H\(height) accepted") }
            if case .failure(let error) = size { #expect(error.code == .badDimension, "\(error)") } else { Issue.record("--size \(width)x\(height) accepted") }
        }
    }
}
