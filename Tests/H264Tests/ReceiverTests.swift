import Testing
import H264
import H264TestSupport

/// `AccessUnitReceiver`: live bytes in chunks → decodable access units, joins mid-stream,
/// missing parameter sets.
@Suite(.ownThread) struct ReceiverTests {
    static func annexB(_ nalUnits: [[UInt8]]) -> [UInt8] {
        nalUnits.flatMap { [0, 0, 0, 1] + $0 }
    }

    /// FFmpeg's access units of a conformance stream: offset (start of the first start code,
    /// leading zero included) and NAL unit types, from `expected/NAME.json`.
    static func ffmpegUnits(_ stream: String) throws -> [(offset: Int, bytes: Int, types: [Int])] {
        let expected = try ExpectedStream.load(stream)
        var offset = 0
        return expected.accessUnits.map { unit in
            defer { offset += unit.bytes }
            return (offset, unit.bytes, unit.nalTypes)
        }
    }

    /// The stream's SPS and PPS (they are sent once, in its first access unit).
    static func parameterSets(_ bytes: [UInt8]) throws -> ParameterSetCache {
        var cache = ParameterSetCache()
        for location in AnnexB.nalUnits(in: bytes) {
            let nal = bytes[location.range]
            if let first = nal.first, [7, 8].contains(first & 0x1F) { try cache.store(nal) }
        }
        return cache
    }

    // Conformance streams (Fixtures/conformance) with IDRs at access units 0, 30, 60, 90 (BA_MW_D)
    // and every 15 (MR1_MW_A), SPS and PPS only in the first; each access unit after the first
    // is one slice NAL unit (FFmpeg's nal_types).
    static let streams = ["BA_MW_D.264", "MR1_MW_A.264"]

    @Test(arguments: streams)
    func wholeStreamAnyChunkingGivesFFmpegsAccessUnits(stream: String) throws {
        let bytes = try TestFixtures.data("conformance/\(stream)")
        let expected = try Self.ffmpegUnits(stream)
        let reference = receiveInRandomChunks(bytes[...], maxChunk: bytes.count, seed: 0)
        let units = accessUnits(reference)
        #expect(units.count == expected.count)
        #expect(units.count == reference.count, "no skip or missing-parameter-set events")
        for (unit, want) in zip(units, expected) {
            #expect(unit.streamOffset == want.offset)
            #expect(unit.byteCount == want.bytes)
            #expect(unit.nalUnitTypes.map { Int($0.rawValue) } == want.types)
            #expect(unit.isIDR == want.types.contains(5))
            #expect(unit.formatDescription != nil)
            #expect(!unit.formatChanged)
        }
        for (seed, maxChunk) in [(1, 1), (2, 7), (3, 188), (4, 1500), (5, 65_536)] as [(UInt64, Int)] {
            #expect(receiveInRandomChunks(bytes[...], maxChunk: maxChunk, seed: seed) == reference, "chunks up to \(maxChunk)")
        }
    }

    /// A receiver that joins in the middle of access unit `i` and knows the parameter sets
    /// out of band starts at the next IDR and reports exactly what it skipped.
    @Test(arguments: streams)
    func joinMidStreamSkipsToTheNextIDR(stream: String) throws {
        let bytes = try TestFixtures.data("conformance/\(stream)")
        let expected = try Self.ffmpegUnits(stream)
        let known = try Self.parameterSets(bytes)
        for i in [1, 7, 29, 31, 44, 59] where i + 1 < expected.count {
            let join = expected[i].offset + expected[i].bytes / 2
            guard let k = expected.indices.first(where: { $0 > i && expected[$0].types.contains(5) }) else { continue }
            let resume = expected[k].offset - join
            let events = receiveInRandomChunks(bytes[join...], maxChunk: 4096, seed: UInt64(i),
                                      receiver: AccessUnitReceiver(parameterSets: known))
            let skip = AccessUnitReceiver.Skip(reason: .waitingForKeyframe, accessUnitCount: k - i - 1,
                                               byteCount: resume, resumedAt: resume)
            #expect(events.first == .skipped(skip), "join at \(join) (access unit \(i))")
            let units = accessUnits(events)
            #expect(units.count == expected.count - k)
            #expect(units.first?.isIDR == true)
            #expect(units.first?.streamOffset == resume)
            #expect(zip(units, expected[k...]).allSatisfy { $0.nalUnitTypes.map { Int($0.rawValue) } == $1.types })
            #expect(events.count == units.count + 1)
        }
    }

    /// Without the parameter sets (sent only at the start) no IDR can be decoded: each is a
    /// reported condition, and at the end the whole rest of the stream is reported skipped.
    @Test(arguments: streams)
    func joinWithoutParameterSetsReportsEveryIDR(stream: String) throws {
        let bytes = try TestFixtures.data("conformance/\(stream)")
        let expected = try Self.ffmpegUnits(stream)
        let i = 3
        let join = expected[i].offset + expected[i].bytes / 2
        var receiver = AccessUnitReceiver()
        let events = receiveInRandomChunks(bytes[join...], maxChunk: 1000, seed: 9, receiver: receiver)
        let idrs = expected.indices.filter { $0 > i && expected[$0].types.contains(5) }
        let missing = idrs.map {
            AccessUnitReceiver.Event.missingParameterSets(.init(streamOffset: expected[$0].offset - join, isIDR: true,
                                                                 pictureParameterSetId: 0, sequenceParameterSetId: nil))
        }
        let skip = AccessUnitReceiver.Skip(reason: .waitingForKeyframe, accessUnitCount: expected.count - i - 1,
                                           byteCount: bytes.count - join, resumedAt: nil)
        #expect(events == missing + [.skipped(skip)])
        receiver.append(bytes[join...])
        _ = receiver.finish()
        #expect(receiver.deliveredAccessUnitCount == 0)
        #expect(receiver.missingParameterSetCount == idrs.count)
        #expect(receiver.skippedByteCount == bytes.count - join)
    }

    let sps = SyntheticStream.sps()
    let pps = SyntheticStream.pps()

    /// A picture naming a PPS that never came while decoding: reported, then the receiver
    /// waits for the next IDR and reports that skip.
    @Test func missingParameterSetsWhileDecodingResynchronise() {
        let nals = [sps, pps, SyntheticStream.slice(idr: true),
                    SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2),
                    SyntheticStream.slice(idr: false, frameNum: 2, pocLsb: 4, ppsId: 5),
                    SyntheticStream.slice(idr: false, frameNum: 3, pocLsb: 6),
                    SyntheticStream.slice(idr: true, idrPicId: 1),
                    SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2)]
        let bytes = Self.annexB(nals)
        let offsets = nals.indices.map { nals[..<$0].reduce(0) { $0 + $1.count + 4 } }
        for maxChunk in [1, 3, bytes.count] {
            let events = receiveInRandomChunks(bytes[...], maxChunk: maxChunk, seed: 11)
            guard events.count == 6 else { Issue.record("\(events.map { "\($0)".prefix(300) })"); continue }
            #expect(accessUnits(Array(events[0...1])).map(\.nalUnitTypes) == [[.sequenceParameterSet, .pictureParameterSet, .idrSlice], [.slice]])
            #expect(events[2] == .missingParameterSets(.init(streamOffset: offsets[4], isIDR: false, pictureParameterSetId: 5,
                                                             sequenceParameterSetId: nil)))
            #expect(events[3] == .skipped(.init(reason: .missingParameterSets, accessUnitCount: 2,
                                                byteCount: offsets[6] - offsets[4], resumedAt: offsets[6])))
            #expect(accessUnits(Array(events[4...])).map(\.nalUnitTypes) == [[.idrSlice], [.slice]])
        }
    }

    /// New parameter sets before an IDR: `formatChanged` on exactly that access unit.
    @Test func formatChangeIsMarkedOnExactlyThatPicture() throws {
        let wide = SyntheticStream.sps(widthInMbs: 4, heightInMbs: 2)
        let nals = [sps, pps, SyntheticStream.slice(idr: true), SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2),
                    wide, pps, SyntheticStream.slice(idr: true, idrPicId: 1), SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2),
                    sps, pps, SyntheticStream.slice(idr: true, idrPicId: 2)]
        let units = accessUnits(receiveInRandomChunks(Self.annexB(nals)[...], maxChunk: 5, seed: 3))
        #expect(units.map(\.formatChanged) == [false, false, true, false, true])
        #expect(units.map { $0.formatDescription?.dimensions.width } == [32, 32, 64, 64, 32])
        #expect(units.map(\.isIDR) == [true, false, true, false, true])
    }

    /// The same parameter sets sent again (as before every IDR of a live stream) are no change.
    @Test func repeatedParameterSetsAreNoFormatChange() {
        let nals = [sps, pps, SyntheticStream.slice(idr: true), sps, pps, SyntheticStream.slice(idr: true, idrPicId: 1)]
        let units = accessUnits(receiveInRandomChunks(Self.annexB(nals)[...], maxChunk: 2, seed: 4))
        #expect(units.map(\.formatChanged) == [false, false])
        #expect(units.count == 2)
    }

    /// After `finish` a receiver takes a new stream (a reconnect): it waits for an IDR again and
    /// keeps the parameter sets it learnt, so an IDR without in-band SPS/PPS decodes.
    @Test func reconnectKeepsParameterSets() {
        var receiver = AccessUnitReceiver()
        let first = receiver.receive(Self.annexB([sps, pps, SyntheticStream.slice(idr: true)])) + receiver.finish()
        #expect(accessUnits(first).count == 1)
        let second = receiver.receive(Self.annexB([SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2),
                                                   SyntheticStream.slice(idr: true, idrPicId: 1),
                                                   SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2)])) + receiver.finish()
        let skippedBytes = SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2).count + 4
        #expect(second.first == .skipped(.init(reason: .waitingForKeyframe, accessUnitCount: 1, byteCount: skippedBytes,
                                               resumedAt: skippedBytes)))
        #expect(accessUnits(second).map(\.isIDR) == [true, false])
        #expect(receiver.deliveredAccessUnitCount == 3)
    }

    /// Garbage before the first start code counts as skipped bytes.
    @Test func garbageBeforeTheFirstStartCodeIsSkipped() {
        let garbage: [UInt8] = [0x47, 0x40, 0x11, 0x10, 0x00, 0x42] // looks like a TS packet header
        let events = receiveInRandomChunks((garbage + Self.annexB([sps, pps, SyntheticStream.slice(idr: true)]))[...], maxChunk: 2, seed: 5)
        #expect(events.first == .skipped(.init(reason: .waitingForKeyframe, accessUnitCount: 0, byteCount: garbage.count,
                                               resumedAt: garbage.count)))
        #expect(accessUnits(events).count == 1)
    }

    /// Random bytes and mutated streams never trap; whatever comes out is decodable-looking:
    /// every access unit handed out has a format and the first of each run is an IDR.
    @Test(arguments: 0..<8)
    func randomInputNeverTraps(seed: Int) {
        var generator = SplitMix64(seed: UInt64(seed) &* 7919)
        var bytes = Self.annexB([sps, pps, SyntheticStream.slice(idr: true), SyntheticStream.slice(idr: false, frameNum: 1, pocLsb: 2)])
        bytes += (0..<2000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for _ in 0..<40 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = [0, 1, 0x65, 0x67, 0x68][Int.random(in: 0..<5, using: &generator)] }
        let events = receiveInRandomChunks(bytes[...], maxChunk: 64, seed: UInt64(seed))
        var decoding = false
        for event in events {
            switch event {
            case .accessUnit(let unit):
                #expect(unit.formatDescription != nil)
                if !decoding { #expect(unit.isIDR) }
                decoding = true
            case .skipped, .missingParameterSets:
                decoding = false
            }
        }
    }
}
