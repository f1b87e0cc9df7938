@testable import H264
import H264TestSupport
import Testing
import MediaCore
import H264
import RTP

/// `RTPZeroCopyDepacketizer` and `AccessUnitView`. That it gives `RTPDepacketizer`'s events for
/// the same packets is checked by every depacketizer test (``DepacketizedEvents``); these check
/// what is its own: the views refer to the packets, keep them alive, and write them out.
@Suite("RTP zero-copy depacketizer", .ownThread)
struct RTPZeroCopyDepacketizerTests {
    /// The access units of `packets`, all read from one buffer.
    static func views(_ packets: [[UInt8]], in buffer: inout [UInt8]) -> [AccessUnitView] {
        buffer = packets.flatMap { $0 }
        var depacketizer = RTPZeroCopyDepacketizer()
        var views: [AccessUnitView] = []
        var start = 0
        for packet in packets {
            depacketizer.append(packet: start..<(start + packet.count), in: buffer)
            start += packet.count
            while let event = depacketizer.next() { if case .accessUnit(let unit) = event { views.append(unit.accessUnit) } }
        }
        depacketizer.finish()
        while let event = depacketizer.next() { if case .accessUnit(let unit) = event { views.append(unit.accessUnit) } }
        return views
    }

    @Test func viewsReferToTheOneBufferInsteadOfCopying() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration(mtu: 600))
        var buffer: [UInt8] = []
        let views = Self.views(stream.packets, in: &buffer)
        #expect(views.count == stream.accessUnits.count)
        // FU-A, STAP-A and single NAL unit packets alike: only the rebuilt FU-A header bytes are
        // not in the buffer, and they are pieces of their own, not copies.
        #expect(views.allSatisfy { $0.ownBytes.isEmpty && !$0.firstBuffer.isEmpty && $0.otherBuffers.isEmpty })
        #expect(views.contains { view in view.pieces.contains { $0.buffer == AccessUnitView.Piece.literal } })
        for (view, unit) in zip(views, stream.accessUnits) {
            #expect(view.bytes(format: .avcc) == unit.data)
        }
    }

    @Test func viewsKeepTheirBytesWhenTheCallerReusesItsBuffer() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        var buffer: [UInt8] = []
        let views = Self.views(stream.packets, in: &buffer)
        // The caller writes its next datagrams over the same array: the write copies it, the
        // views still see what was received.
        for index in buffer.indices { buffer[index] = 0xFF }
        #expect(views.map { $0.bytes(format: .avcc) } == stream.accessUnits.map(\.data))
    }

    @Test func annexBAndPiecesAndCopies() throws {
        let stream = try PacketizedStream(configuration: rtpConfiguration(mtu: 300))
        var buffer: [UInt8] = []
        let views = Self.views(stream.packets, in: &buffer)
        for (view, unit) in zip(views, stream.accessUnits) {
            let annexB = unit.nalUnits.flatMap { AnnexB.fourByteStartCode + $0 }
            #expect(view.bytes(format: .annexB) == annexB)
            var total = 0
            var empty = 0
            view.forEachPiece(format: .annexB) { total += $0.count; if $0.isEmpty { empty += 1 } }
            #expect(total == view.encodedByteCount && empty == 0)
            #expect(view.nalUnitCount == unit.nalUnitTypes.count && view.nalUnitTypes == unit.nalUnitTypes)
            #expect(view.isIDR == unit.isIDR && view.hasPicture == unit.hasPicture)
            // Too small a destination: nothing written.
            let small = UnsafeMutableRawBufferPointer.allocate(byteCount: view.encodedByteCount - 1, alignment: 1)
            defer { small.deallocate() }
            small.initializeMemory(as: UInt8.self, repeating: 0x5A)
            #expect(view.copyBytes(into: small) == 0)
            #expect(small.allSatisfy { $0 == 0x5A })
        }
    }

    @Test func aFragmentedParameterSetIsGatheredIntoTheViewsOwnBytes() throws {
        // An SPS larger than one packet goes through FU-A and is stored whole: the one case
        // where the view holds a copy.
        let stream = try PacketizedStream(configuration: rtpConfiguration())
        let idr = try #require(stream.accessUnits.first { $0.isIDR })
        let nalUnits = idr.nalUnits.map(Array.init)
        let sps = try #require(nalUnits.first { $0[0] & 0x1F == 7 })
        let bigSPS = sps + [UInt8](repeating: 0x80, count: 2000)
        var packetizer = RTPPacketizer(configuration: rtpConfiguration())
        let packets = try packetizer.packets(avcc: avccData(nalUnits.map { $0 == sps ? bigSPS : $0 }), presentationTime: .zero)
        var buffer: [UInt8] = []
        let views = Self.views(packets, in: &buffer)
        let view = try #require(views.first)
        #expect(view.ownBytes.count == bigSPS.count)
        #expect(view.accessUnit.nalUnits.map(Array.init) == nalUnits.map { $0 == sps ? bigSPS : $0 })
    }

    @Test func aRangeOutsideTheBufferIsReportedNotRead() {
        var depacketizer = RTPZeroCopyDepacketizer()
        let buffer = [UInt8](repeating: 0, count: 20)
        depacketizer.append(packet: 10..<30, in: buffer)
        depacketizer.append(packet: -1..<5, in: buffer)
        var codes: [MediaError.Code] = []
        while let event = depacketizer.next() { if case .diagnostic(let error) = event { codes.append(error.code) } }
        #expect(codes == [.lengthPastEnd, .lengthPastEnd])
        #expect(depacketizer.packetCount == 2)
    }

    @Test func theAccessUnitSizeLimitStaysWithin32Bits() {
        let depacketizer = RTPZeroCopyDepacketizer(configuration: .init(maximumAccessUnitSize: Int.max))
        #expect(depacketizer.configuration.maximumAccessUnitSize == 1 << 30)
    }
}
