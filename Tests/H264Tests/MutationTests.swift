import Foundation
import Testing
import H264
import H264TestSupport

/// Seeded random mutations of real streams through every parser: nothing may crash, trap or hang
/// (a trap would end the test process). Fuzzing proper runs with libFuzzer (see Scripts/).
@Suite(.ownThread) struct MutationTests {
    /// Runs every parser over `bytes`, ignoring thrown errors, and checks the invariants that hold
    /// for any input: access units partition the input (unless every unit was damaged and dropped),
    /// and the streaming reader finds exactly the
    /// NAL units whole-buffer parsing finds. Returns false when an invariant fails.
    @discardableResult
    static func exercise(_ bytes: [UInt8], chunkSeed: UInt64) -> Bool {
        var covered = 0
        var partitionStart = 0
        var partitionHolds = true
        var cache = ParameterSetCache()
        var assembler = AccessUnitAssembler()
        for location in AnnexB.nalUnits(in: bytes) {
            let nal = Array(bytes[location.range])
            _ = try? NALUnitHeader(validating: nal)
            switch nal.first.map({ $0 & 0x1F }) {
            case 7:
                _ = try? SequenceParameterSet(nalUnit: nal)
                _ = try? SequenceParameterSet.syntaxElements(nalUnit: nal)
                _ = try? cache.store(nal)
            case 8:
                _ = try? PictureParameterSet(nalUnit: nal, sequenceParameterSets: cache.sequenceParameterSets)
                _ = try? PictureParameterSet.syntaxElements(nalUnit: nal, sequenceParameterSets: cache.sequenceParameterSets)
                _ = try? cache.store(nal)
            case 1, 5:
                _ = try? SliceHeader(nalUnit: nal, parameterSets: cache)
            default:
                break
            }
            if let unit = assembler.append(nalUnit: nal, streamOffset: location.startCodeOffset) {
                partitionHolds = partitionHolds && unit.streamOffset == partitionStart
                partitionStart += unit.byteCount
                covered += unit.byteCount
            }
        }
        if let unit = assembler.finish(streamLength: bytes.count) {
            partitionHolds = partitionHolds && unit.streamOffset == partitionStart
            covered += unit.byteCount
        }
        let whole = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
        for size in [1, 2, 4] {
            _ = try? AVCC.nalUnits(in: bytes, lengthSize: size)
            if let converted = try? AVCC.fromAnnexB(bytes, lengthSize: size, parameterSets: .inBand) {
                _ = try? AnnexB.fromAVCCStream(converted.data, lengthSize: size, parameterSets: nil)
            }
        }
        _ = try? AVCDecoderConfigurationRecord(parsing: bytes.prefix(200))
        _ = try? AVCDecoderConfigurationRecord(extradata: Array(bytes.prefix(200)))
        var reader = AnnexBStreamReader()
        var streamed: [[UInt8]] = []
        var generator = SplitMix64(seed: chunkSeed)
        var position = 0
        while position < bytes.count {
            let size = Int.random(in: 1...4096, using: &generator)
            let end = min(bytes.count, position + size)
            reader.append(bytes[position..<end])
            while let unit = reader.next() { streamed.append(unit.bytes) }
            position = end
        }
        streamed += reader.finish().map(\.bytes)
        // No access unit at all only when there is no NAL unit, or every one was damaged and
        // dropped (each reported once).
        let nothingFound = covered == 0 && (whole.isEmpty || assembler.errorCount >= whole.count)
        return streamed == whole && partitionHolds && (nothingFound || covered == bytes.count)
    }

    static let streams = ["CABA2_SVA_B.264", "SVA_BA2_D.264", "FRExt3_Panasonic.avc", "HCAFF1_HHI.264"]

    @Test(arguments: streams)
    func mutatedStreamsNeverCrash(stream: String) throws {
        let original = try TestFixtures.data("conformance/\(stream)")
        var generator = SplitMix64(seed: 0x5EED_0000 &+ UInt64(stream.utf8.count))
        for round in 0..<60 {
            var bytes = original
            let mutations = Int.random(in: 1...32, using: &generator)
            for _ in 0..<mutations {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes[index] = 0
                case 2: bytes.insert(contentsOf: [0, 0, 1], at: index)
                default: bytes.removeSubrange(index..<min(bytes.count, index + Int.random(in: 1...64, using: &generator)))
                }
                if bytes.isEmpty { bytes = [0] }
            }
            // Truncate sometimes, at any byte.
            if round % 5 == 0 { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator))) }
            #expect(Self.exercise(bytes, chunkSeed: UInt64(round)), "round \(round)")
        }
        #expect(Self.exercise(original, chunkSeed: 1))
    }

    @Test func randomBytesNeverCrash() {
        var generator = SplitMix64(seed: 42)
        for length in [0, 1, 2, 3, 4, 5, 7, 16, 100, 1000] {
            for _ in 0..<20 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                #expect(Self.exercise(bytes, chunkSeed: UInt64(length)))
                // Start-code-heavy noise.
                let zeros = (0..<length).map { _ in [0, 0, 1, 3, 0x67, 0x68, 0x65][Int.random(in: 0..<7, using: &generator)] as UInt8 }
                #expect(Self.exercise(zeros, chunkSeed: UInt64(length)))
            }
        }
    }
}
