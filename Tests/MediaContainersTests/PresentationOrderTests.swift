import H264
import MediaContainers
import H264TestSupport
import Testing

/// `PresentationOrder` (the streaming bumping process) puts every conformance stream and the
/// x264 B-pyramid stream in the presentation order of `FLVConversion.timestamps` (all access
/// units sorted by coded video sequence and picture order count, whose FLV output FFmpeg reads
/// with x264's own timestamps in FLVConvertTests), never presenting before decoding.
@Suite(.ownThread, .timeLimit(.minutes(5))) struct PresentationOrderTests {
    static let streams = ["flv/x264_bframes_320x192_9f.264"] + TestFixtures.conformanceStreams.map { "conformance/" + $0 }

    @Test(arguments: streams) func ordersAsTheWholeStreamSorted(stream: String) throws {
        let units = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data(stream)).filter(\.hasPicture)
        var order = PresentationOrder()
        var placed: [PresentationOrder.Placed] = []
        var waitingMost = 0
        for (index, unit) in units.enumerated() {
            placed += order.append(unit)
            waitingMost = max(waitingMost, index + 1 - placed.count)
        }
        placed += order.finish()
        #expect(placed.map(\.decodeIndex) == Array(units.indices))
        #expect(placed.allSatisfy { $0.presentationIndex >= $0.decodeIndex })
        #expect(waitingMost <= PresentationOrder.maximumWait)
        let times = FLVConversion.timestamps(of: units, frameRate: 1000)
        let expected = units.indices.sorted { times[$0].presentation < times[$1].presentation }
        #expect(placed.sorted { $0.presentationIndex < $1.presentationIndex }.map(\.decodeIndex) == expected)
        #expect(Set(placed.map(\.presentationIndex)).count == units.count)
    }

    /// The x264 stream's B-frames (reorder depth 2 in its VUI) come out as its presentation times
    /// say: shifted by 2, a permutation within each GOP.
    @Test func bFramesOfX264() throws {
        let units = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("flv/x264_bframes_320x192_9f.264")).filter(\.hasPicture)
        #expect(units.first?.formatDescription?.sequenceParameterSet?.maximumReorderDepth == 2)
        var order = PresentationOrder()
        let placed = units.flatMap { order.append($0) } + order.finish()
        #expect(placed.map(\.presentationIndex).sorted() == Array(2..<11))
        #expect(placed.map(\.presentationIndex) != placed.map { $0.decodeIndex + 2 }, "the B-frames are reordered")
    }

    /// A stream that breaks its reorder depth (the same non-IDR pictures over and over, their
    /// counts going round) keeps at most `maximumWait` access units waiting.
    @Test func memoryStaysBounded() throws {
        let units = AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data("flv/x264_bframes_320x192_9f.264")).filter(\.hasPicture)
        var order = PresentationOrder()
        var placed: [PresentationOrder.Placed] = []
        for round in 0..<1_000 {
            placed += order.append(units[1 + round % 5])
            #expect(round + 1 - placed.count <= PresentationOrder.maximumWait)
        }
        #expect(zip(placed, placed.dropFirst()).allSatisfy { $0.decodeIndex + 1 == $1.decodeIndex })
        #expect(placed.allSatisfy { $0.presentationIndex >= $0.decodeIndex })
    }
}
