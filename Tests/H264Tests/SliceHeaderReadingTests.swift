import Testing
@testable import H264
import H264TestSupport
import MediaCore
import H264

/// The allocation-free slice-header reader of the access-unit boundary rule
/// (`SliceHeader.read(header:payload:parameterSets:)`) and the bit cursor under every reader,
/// against independent references: a bit-at-a-time Exp-Golomb reader written here, and the
/// public two-step path (`SliceHeader.Prefix`, then `SliceHeader(prefix:parameterSets:)`).
@Suite(.ownThread) struct SliceHeaderReadingTests {
    /// clause 9.1 read one bit at a time, as the standard writes it: the reference for
    /// `BitCursor`'s byte-at-a-time reads.
    struct ReferenceReader {
        let bytes: [UInt8]
        var offset = 0

        mutating func bit() -> Int? {
            guard offset < bytes.count * 8 else { return nil }
            defer { offset += 1 }
            return Int(bytes[offset / 8] >> (7 - offset % 8)) & 1
        }

        /// `nil` when the bits run out; the offset is kept only on success.
        mutating func bits(_ count: Int) -> Int? {
            let start = offset
            var value = 0
            for _ in 0..<count {
                guard let bit = bit() else { offset = start; return nil }
                value = value << 1 | bit
            }
            return value
        }

        /// A value; or the data ends, the error at the code's first bit when its prefix runs out
        /// and at its suffix's when that does (as `u(n)` of the suffix reports it); or 32 zeros.
        enum Outcome: Equatable { case value(Int), truncated(at: Int), overflow }

        mutating func ue() -> Outcome {
            let start = offset
            var zeros = 0
            while true {
                guard let bit = bit() else { offset = start; return .truncated(at: start) }
                if bit == 1 { break }
                zeros += 1
                if zeros == 32 { offset = start; return .overflow }
            }
            let suffixStart = offset
            guard let suffix = bits(zeros) else { offset = start; return .truncated(at: suffixStart) }
            return .value((1 << zeros) - 1 + suffix)
        }
    }

    /// Random bytes (zero-heavy, so that long Exp-Golomb prefixes and overflows occur) read by a
    /// random mix of `u(n)`, `ue(v)` and `se(v)`: the same values, the same errors at the same bit
    /// offsets, and the same position after each read, as the bit-at-a-time reference.
    @Test(arguments: 0..<40) func bitCursorReadsAsTheReference(seed: UInt64) {
        var random = SplitMix64(seed: 0xB17C_0000 + seed)
        let count = Int.random(in: 0...24, using: &random)
        let bytes = (0..<count).map { _ -> UInt8 in
            switch Int.random(in: 0..<4, using: &random) {
            case 0, 1: 0
            case 2: UInt8.random(in: 0...3, using: &random)
            default: UInt8.random(in: 0...255, using: &random)
            }
        }
        var reference = ReferenceReader(bytes: bytes)
        bytes.withUnsafeBufferPointer { buffer in
            var cursor = BitCursor(buffer)
            for _ in 0..<30 {
                let before = cursor.bitOffset
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    let n = Int.random(in: 0...32, using: &random)
                    let expected = reference.bits(n)
                    do throws(MediaError) {
                        let value = try cursor.readBits(n, "u")
                        #expect(value == expected)
                    } catch {
                        #expect(expected == nil && error.code == .truncated && error.bitOffset == before)
                    }
                case 1:
                    let expected = reference.ue()
                    do throws(MediaError) {
                        #expect(.value(try cursor.readUE("ue", range: 0...Int(UInt32.max))) == expected)
                    } catch {
                        switch expected {
                        case .overflow: #expect(error.code == .expGolombOverflow && error.bitOffset == before)
                        case .truncated(let at): #expect(error.code == .truncated && error.bitOffset == at)
                        case .value(let value): Issue.record("\(error), expected \(value)")
                        }
                        #expect(error.field == "ue")
                    }
                default:
                    let expected = reference.ue()
                    do throws(MediaError) {
                        let value = try cursor.readSE("se", range: Int(Int32.min)...Int(Int32.max))
                        guard case .value(let codeNum) = expected else { Issue.record("read \(value), expected \(expected)"); continue }
                        #expect(value == (codeNum & 1 == 1 ? (codeNum + 1) / 2 : -(codeNum / 2)))
                    } catch {
                        switch expected {
                        case .overflow: #expect(error.code == .expGolombOverflow && error.bitOffset == before)
                        case .truncated(let at): #expect(error.code == .truncated && error.bitOffset == at)
                        case .value(let value): Issue.record("\(error), expected \(value)")
                        }
                    }
                }
                #expect(cursor.bitOffset == reference.offset)
            }
        }
    }

    /// What the public two-step path finds in `nalUnit`, in the reader's terms.
    static func twoSteps(_ nalUnit: [UInt8], _ cache: ParameterSetCache) -> String {
        let prefix: SliceHeader.Prefix
        do { prefix = try SliceHeader.Prefix(nalUnit: nalUnit) } catch { return "damaged \(error)" }
        do {
            let header = try SliceHeader(prefix: prefix, parameterSets: cache)
            return "header \(SliceHeader.PictureIdentity(header)) \(header.diagnostics)"
        } catch {
            return "prefix \(prefix.firstMbInSlice) \(error)"
        }
    }

    static func oneRead(_ nalUnit: [UInt8], _ cache: ParameterSetCache, firstWindow: Int) -> String {
        let reading = nalUnit.withUnsafeBufferPointer {
            SliceHeader.read(header: $0.first ?? 0, payload: UnsafeBufferPointer(rebasing: $0.dropFirst()),
                             parameterSets: cache, firstWindow: firstWindow)
        }
        return switch reading {
        case .damaged(let error): "damaged \(error)"
        case .prefix(let firstMb, let problem): "prefix \(firstMb) \(problem)"
        case .header(let picture, let diagnostics): "header \(picture) \(diagnostics)"
        }
    }

    /// Every slice of every conformance stream (the first 12 of each), whole and cut short after
    /// each of its first 40 bytes, read with first windows of 1 to 40 bytes (so that the header
    /// runs past the window and is read again): the same header, or the same error, as the
    /// two-step path — also without its parameter sets.
    @Test(arguments: TestFixtures.conformanceStreams)
    func readsAsThePrefixAndTheRest(stream: String) throws {
        let bytes = try TestFixtures.data("conformance/\(stream)")
        var cache = ParameterSetCache()
        var slices = 0
        for location in AnnexB.nalUnits(in: bytes) where slices < 12 {
            let nal = Array(bytes[location.range])
            switch nal.first.map({ $0 & 0x1F }) {
            case 7, 8:
                _ = try? cache.store(nal)
            case 1, 2, 5:
                slices += 1
                for length in [nal.count] + Array(1..<Swift.min(nal.count, 41)) {
                    let cut = Array(nal.prefix(length))
                    let expected = Self.twoSteps(cut, cache)
                    for window in [16, 32, 1, 2, 3, 5, 8, 13, 21, 40] {
                        #expect(Self.oneRead(cut, cache, firstWindow: window) == expected, "\(stream) slice \(slices), \(length) bytes, window \(window)")
                    }
                }
                #expect(Self.oneRead(nal, ParameterSetCache(), firstWindow: 32) == Self.twoSteps(nal, ParameterSetCache()))
            default:
                #expect(Self.oneRead(nal, cache, firstWindow: 32) == Self.twoSteps(nal, cache))
            }
        }
        #expect(slices > 0)
    }

    /// Hand-built headers with long codes and emulation prevention inside the header: a huge
    /// `idr_pic_id` (kept with a warning), the largest `first_mb_in_slice`, one past it, and
    /// headers made of zero bits.
    @Test func longAndEscapedHeaders() throws {
        var cache = ParameterSetCache()
        try cache.store(SyntheticStream.sps())
        try cache.store(SyntheticStream.pps(redundantPicCntPresent: true))
        let slices = [
            SyntheticStream.slice(idr: true, firstMb: 139_264, idrPicId: 1 << 31, redundantPicCnt: 127),
            SyntheticStream.slice(idr: true, firstMb: 139_265),
            SyntheticStream.slice(idr: false, firstMb: 0, frameNum: 0, pocLsb: 0, redundantPicCnt: 0),
            SyntheticStream.slice(idr: true, firstMb: 1 << 16, idrPicId: (1 << 32) - 2, redundantPicCnt: 128),
            [0x65, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x01, 0x80],
            [0x65] + [UInt8](repeating: 0, count: 40),
        ]
        for nal in slices {
            for window in 1...33 {
                #expect(Self.oneRead(nal, cache, firstWindow: window) == Self.twoSteps(nal, cache), "\(nal.prefix(12)) window \(window)")
            }
        }
        #expect(Self.oneRead(slices[0], cache, firstWindow: 32).hasPrefix("header"))
        #expect(Self.oneRead(slices[1], cache, firstWindow: 32).hasPrefix("damaged"))
        #expect(Self.oneRead(slices[3], cache, firstWindow: 32).hasPrefix("prefix 65536"))
    }
}
