public import H264

/// Groups NAL units into access units as `AccessUnitAssembler` does (the same
/// `AccessUnitTracker`), but keeps each NAL unit as pieces of the buffers it arrived in rather
/// than copying it: its access units are `AccessUnitView`s.
///
/// Bytes that lie in the packet named by ``usePacket(_:bytes:)`` are kept by reference to that
/// packet's buffer; any other bytes (a NAL unit the depacketizer had to gather first) are copied
/// into the view's own bytes.
package struct AccessUnitViewAssembler: RTPAccessUnitStorage {
    package typealias Piece = AccessUnitView.Piece
    package typealias Format = RFC6184PayloadFormat

    private var tracker: AccessUnitTracker
    private var firstBuffer: [UInt8] = []
    private var otherBuffers: [[UInt8]] = []
    /// How many buffers the access unit refers to (`firstBuffer`, then `otherBuffers`).
    private var bufferCount: Int32 = 0
    private var ownBytes: [UInt8] = []
    /// The access unit's pieces are the first `pieceCount` (the array keeps its capacity and
    /// its elements from one access unit to the next: starting over is setting the count).
    private var pieces: [Piece] = []
    private var pieceCount = 0
    private var nalUnitCount = 0
    /// The access unit's size in AVCC form so far (the open NAL unit's pieces included).
    private var encodedByteCount = 0

    /// The buffer of the packet being read; its storage stays where it is while it is held here
    /// (an array's storage moves only when that array is changed, and a held one never is).
    private var packet: [UInt8] = []
    /// The address where `packet`'s bytes begin (0: no packet), to tell which bytes lie in it
    /// and at what offset; an integer because it is only compared, never read through.
    private var packetStart: UInt = 0
    /// The address just past `packet`'s bytes; equal to `packetStart` when none of its bytes may
    /// be referred to (no packet, or one too large for a piece's 32-bit offsets).
    private var packetEnd: UInt = 0
    /// The index of `packet` among the access unit's buffers, or -1 while it refers to none of it.
    private var packetIndex: Int32 = -1

    /// The index in `pieces` of the marker of the NAL unit being added.
    private var nalUnitFirstPiece = 0
    /// The size of the NAL unit being written in pieces so far, or -1 when none is open.
    private var openByteCount = -1

    package init(parameterSets: ParameterSetCache) {
        tracker = AccessUnitTracker(parameterSets: parameterSets, handsOutTypes: false)
    }

    package var parameterSets: ParameterSetCache { tracker.parameterSets }

    package mutating func usePacket(_ owner: borrowing [UInt8], bytes: UnsafeRawBufferPointer) {
        guard !owner.isEmpty else {
            packet = []
            packetStart = 0
            packetEnd = 0
            packetIndex = -1
            return
        }
        // The same buffer as the last packet (many packets read into one buffer): nothing to
        // retain again.
        let start = owner.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        guard start != packetStart else { return }
        packet = copy owner
        packetStart = start
        packetEnd = owner.count <= Int(Int32.max) ? start + UInt(owner.count) : start
        packetIndex = -1
    }

    package mutating func append(nalUnit: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> AccessUnitView? {
        // A NAL unit still being written in pieces ends where it came to.
        if openByteCount >= 0 { endNALUnit() }
        guard case .placed(let closed) = tracker.place(nalUnit, streamOffset: streamOffset) else { return nil }
        var completed: AccessUnitView?
        if let closed { completed = package(closed) }
        startNALUnit()
        add(UnsafeRawBufferPointer(nalUnit))
        endNALUnit(byteCount: nalUnit.count)
        return completed
    }

    package mutating func beginNALUnit(header: UInt8, leading: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> Bool {
        guard openByteCount < 0, leading.count >= AccessUnitAssembler.leadingByteCount else { return false }
        guard tracker.beginPieces(header: header, leading: leading, streamOffset: streamOffset) else { return false }
        startNALUnit()
        appendPiece(Piece(buffer: Piece.literal, start: Int32(header), count: 1))
        encodedByteCount += 1
        add(UnsafeRawBufferPointer(leading))
        openByteCount = 1 + leading.count
        return true
    }

    @inline(__always)
    package mutating func appendToNALUnit(_ bytes: UnsafeBufferPointer<UInt8>) {
        add(UnsafeRawBufferPointer(bytes))
        openByteCount += bytes.count
    }

    package mutating func endNALUnit() {
        guard openByteCount >= 0 else { return }
        endNALUnit(byteCount: openByteCount)
        openByteCount = -1
        tracker.endPieces()
    }

    package mutating func finishAccessUnit() -> AccessUnitView? {
        guard !tracker.isEmpty else { return nil }
        // A NAL unit still being written goes with its access unit as far as it came.
        if openByteCount >= 0 { endNALUnit() }
        return package(tracker.close(at: tracker.startOffset + encodedByteCount))
    }

    package mutating func dropAccessUnit() {
        if openByteCount >= 0 {
            pieceCount = nalUnitFirstPiece
            encodedByteCount -= openByteCount
            openByteCount = -1
            tracker.dropPieces()
        }
        _ = finishAccessUnit()
    }

    /// Adds `bytes` to the NAL unit being added: a reference when they lie in the packet being
    /// read, a copy otherwise.
    @inline(__always)
    private mutating func add(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        let start = UInt(bitPattern: bytes.baseAddress)
        encodedByteCount &+= bytes.count
        if start >= packetStart, start &+ UInt(bytes.count) <= packetEnd {
            if packetIndex < 0 {
                packetIndex = bufferCount
                if bufferCount == 0 { firstBuffer = packet } else { otherBuffers.append(packet) }
                bufferCount += 1
            }
            let offset = Int32(start - packetStart)
            // Two pieces in a row of one NAL unit that meet in the buffer are one piece.
            let last = pieceCount &- 1
            if last > nalUnitFirstPiece, pieces[last].buffer == packetIndex, pieces[last].start &+ pieces[last].count == offset {
                pieces[last].count += Int32(bytes.count)
            } else {
                appendPiece(Piece(buffer: packetIndex, start: offset, count: Int32(bytes.count)))
            }
            return
        }
        let offset = ownBytes.count
        ownBytes.append(contentsOf: bytes)
        appendPiece(Piece(buffer: Piece.own, start: Int32(truncatingIfNeeded: offset), count: Int32(truncatingIfNeeded: bytes.count)))
    }

    @inline(__always)
    private mutating func appendPiece(_ piece: Piece) {
        if pieceCount < pieces.count { pieces[pieceCount] = piece } else { pieces.append(piece) }
        pieceCount &+= 1
    }

    /// Opens a NAL unit: its marker, whose size ``endNALUnit(byteCount:)`` fills in.
    private mutating func startNALUnit() {
        nalUnitFirstPiece = pieceCount
        appendPiece(Piece(buffer: Piece.nalUnit, start: 0, count: 0))
    }

    /// Closes the NAL unit being added: its pieces end here.
    private mutating func endNALUnit(byteCount: Int) {
        pieces[nalUnitFirstPiece].count = Int32(truncatingIfNeeded: byteCount)
        nalUnitCount += 1
        encodedByteCount += 4
    }

    /// The view of `closed` with the pieces gathered for it; starts the next one's.
    private mutating func package(_ closed: AccessUnitTracker.Closed) -> AccessUnitView {
        // The buffers move into the view (no retain and release each).
        var first: [UInt8] = [], others: [[UInt8]] = [], own: [UInt8] = []
        swap(&first, &firstBuffer)
        if !otherBuffers.isEmpty { swap(&others, &otherBuffers) }
        if !ownBytes.isEmpty { swap(&own, &ownBytes) }
        let view = AccessUnitView(header: AccessUnitView.Header(streamOffset: closed.streamOffset, byteCount: closed.byteCount,
                                                                formatDescription: closed.formatDescription,
                                                                formatChanged: closed.formatChanged, encodedByteCount: encodedByteCount,
                                                                nalUnitCount: nalUnitCount, pieceCount: pieceCount,
                                                                firstBuffer: first, otherBuffers: others, ownBytes: own),
                                  pieces: pieces)
        bufferCount = 0
        pieceCount = 0
        nalUnitCount = 0
        encodedByteCount = 0
        packetIndex = -1
        nalUnitFirstPiece = 0
        return view
    }
}
