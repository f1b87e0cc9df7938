/// An access unit that refers to the bytes of the packets it arrived in, instead of holding a
/// copy of them: the counterpart of a `CMBlockBuffer` made of several memory blocks.
///
/// `RTPZeroCopyDepacketizer` hands these out. Its NAL units are pieces of the received
/// buffers (a fragmented NAL unit is one piece per FU-A, after its rebuilt header byte), kept
/// alive by the view, so the bytes are copied once, into wherever they go: a decoder's input
/// buffer (``copyBytes(into:format:)``), a file or socket (``forEachPiece(format:_:)``), or an
/// ``AccessUnit`` when an API needs one (``accessUnit``).
///
/// It has the same NAL units, types, format and stream offsets as the ``AccessUnit`` that
/// `RTPDepacketizer` builds from the same packets; ``accessUnit`` is that access unit.
///
/// `@unchecked Sendable`: its one stored property is a `ManagedBuffer` (which Swift never lets
/// be `Sendable`) that nothing changes after the view is made, and whose header holds only
/// `Sendable` values.
public struct AccessUnitView: @unchecked Sendable {
    /// Everything, in one allocation: what is known of the access unit and the buffers it refers
    /// to in the header, its pieces after it. Copying a view, or handing it out in an event,
    /// retains this one object.
    private let storage: Storage

    /// What a view knows apart from its pieces.
    package struct Header: Sendable {
        package var streamOffset: Int
        package var byteCount: Int
        package var formatDescription: FormatDescription?
        package var formatChanged: Bool
        package var encodedByteCount: Int
        package var nalUnitCount: Int
        package var pieceCount: Int
        /// The first received buffer the pieces refer to (most access units need no other), and
        /// the others.
        package var firstBuffer: [UInt8]
        package var otherBuffers: [[UInt8]]
        /// Bytes that were not in any received buffer as they are in the NAL unit: NAL units
        /// gathered before they could be placed (a fragmented parameter set, say).
        package var ownBytes: [UInt8]

        /// Memberwise.
        package init(streamOffset: Int, byteCount: Int, formatDescription: FormatDescription?, formatChanged: Bool, encodedByteCount: Int, nalUnitCount: Int, pieceCount: Int, firstBuffer: [UInt8], otherBuffers: [[UInt8]], ownBytes: [UInt8]) {
            self.streamOffset = streamOffset
            self.byteCount = byteCount
            self.formatDescription = formatDescription
            self.formatChanged = formatChanged
            self.encodedByteCount = encodedByteCount
            self.nalUnitCount = nalUnitCount
            self.pieceCount = pieceCount
            self.firstBuffer = firstBuffer
            self.otherBuffers = otherBuffers
            self.ownBytes = ownBytes
        }
    }

    /// The header, then the pieces: for each NAL unit in order, a ``Piece/nalUnit`` marker
    /// holding its size, then its pieces. A piece's `buffer` is 0 for `firstBuffer`, i ≥ 1 for
    /// `otherBuffers[i - 1]`, ``Piece/own`` for `ownBytes`, or ``Piece/literal`` for the one
    /// byte in its `start` (the rebuilt header byte of a fragmented NAL unit).
    package final class Storage: ManagedBuffer<Header, Piece> {
        deinit {
            _ = withUnsafeMutablePointers { header, pieces in pieces.deinitialize(count: header.pointee.pieceCount) }
        }
    }

    /// A run of bytes of one buffer, or the marker before a NAL unit's pieces.
    package struct Piece: Sendable {
        /// The buffer for ``AccessUnitView/ownBytes``.
        package static let own: Int32 = -1
        /// The buffer of a one-byte piece whose byte is its `start`.
        package static let literal: Int32 = -2
        /// The buffer of the marker before a NAL unit, whose `count` is the NAL unit's size.
        package static let nalUnit: Int32 = -3
        package var buffer: Int32
        package var start: Int32
        package var count: Int32

        /// Memberwise.
        package init(buffer: Int32, start: Int32, count: Int32) {
            self.buffer = buffer
            self.start = start
            self.count = count
        }
    }

    /// A view of `header` and a copy of the first `header.pieceCount` of `pieces`.
    package init(header: Header, pieces: borrowing [Piece]) {
        let count = header.pieceCount
        precondition(count <= pieces.count)
        storage = unsafeDowncast(Storage.create(minimumCapacity: count) { _ in header }, to: Storage.self)
        pieces.withUnsafeBufferPointer { source in
            storage.withUnsafeMutablePointerToElements { elements in
                if let base = source.baseAddress { elements.initialize(from: base, count: count) }
            }
        }
    }

    /// The header. Every read goes through its pointer: `ManagedBuffer.header` is a class
    /// property whose every access is checked for exclusivity at run time, and nothing writes
    /// it after `init`.
    private var header: Header { storage.withUnsafeMutablePointerToHeader { $0.pointee } }

    /// Where the access unit begins in the stream of NAL units received so far, counted in AVCC
    /// form with 4-byte lengths (as ``AccessUnit/streamOffset`` of the depacketizer's access
    /// units).
    public var streamOffset: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee.streamOffset } }
    /// How many bytes of that stream the access unit covers (as ``AccessUnit/byteCount``).
    public var byteCount: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee.byteCount } }
    /// The format (SPS and PPS) the access unit's first slice refers to, when they are known.
    public var formatDescription: FormatDescription? { storage.withUnsafeMutablePointerToHeader { $0.pointee.formatDescription } }
    /// True when ``formatDescription`` differs from the previous access unit's that had one.
    public var formatChanged: Bool { storage.withUnsafeMutablePointerToHeader { $0.pointee.formatChanged } }
    /// The size of the access unit with a 4-byte length (AVCC) or a 4-byte start code (Annex-B)
    /// before each NAL unit: what ``copyBytes(into:format:)`` writes.
    public var encodedByteCount: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee.encodedByteCount } }
    /// How many NAL units the access unit holds.
    public var nalUnitCount: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee.nalUnitCount } }

    /// The received buffers and the view's own bytes (see ``Header``).
    package var firstBuffer: [UInt8] { storage.withUnsafeMutablePointerToHeader { $0.pointee.firstBuffer } }
    package var otherBuffers: [[UInt8]] { storage.withUnsafeMutablePointerToHeader { $0.pointee.otherBuffers } }
    package var ownBytes: [UInt8] { storage.withUnsafeMutablePointerToHeader { $0.pointee.ownBytes } }
    /// The pieces, in order, markers included.
    package var pieces: [Piece] {
        var pieces: [Piece] = []
        forEachRun { piece, _ in pieces.append(piece) }
        return pieces
    }

    /// The type of each NAL unit, in order (read from each one's header byte).
    public var nalUnitTypes: [NALUnitType] {
        var types: [NALUnitType] = []
        types.reserveCapacity(nalUnitCount)
        forEachNALUnitType { types.append($0) }
        return types
    }

    /// True when the access unit holds an IDR picture.
    public var isIDR: Bool {
        var found = false
        forEachNALUnitType { if $0 == .idrSlice { found = true } }
        return found
    }

    /// True when the access unit holds at least one VCL NAL unit (coded slice data).
    public var hasPicture: Bool {
        var found = false
        forEachNALUnitType { if $0.isVCL { found = true } }
        return found
    }

    /// Calls `body` with the type of each NAL unit in order: from the first byte of the piece
    /// after each marker (a NAL unit is never empty).
    private func forEachNALUnitType(_ body: (NALUnitType) -> Void) {
        var afterMarker = false
        forEachRun { piece, bytes in
            if afterMarker, let first = bytes.first { body(NALUnitHeader(byte: first).nalUnitType) }
            afterMarker = piece.buffer == Piece.nalUnit
        }
    }

    /// How the NAL units are laid out when written out.
    public enum Format: Sendable {
        /// Each NAL unit after its size as a 4-byte big-endian number (as ``AccessUnit/data``).
        case avcc
        /// Each NAL unit after a 4-byte start code (`00 00 00 01`), as an Annex-B byte stream.
        case annexB
    }

    /// Calls `body` with each run of bytes of the access unit in order: for each NAL unit, its
    /// 4-byte length or start code, then its pieces. Nothing is copied; the pointers are valid
    /// only during the call.
    ///
    /// - Parameters:
    ///   - format: what comes before each NAL unit.
    ///   - body: called with each run of bytes, never with an empty one.
    public func forEachPiece(format: Format = .avcc, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try forEachRun { piece, bytes in
            if piece.buffer == Piece.nalUnit {
                var prefix: UInt32 = switch format {
                case .avcc: UInt32(piece.count).bigEndian
                case .annexB: UInt32(1).bigEndian
                }
                try withUnsafeBytes(of: &prefix) { try body($0) }
            } else {
                try body(bytes)
            }
        }
    }

    /// Copies the access unit into `destination`, which must hold at least
    /// ``encodedByteCount`` bytes: the one copy on the way to a decoder or a file.
    ///
    /// - Parameters:
    ///   - destination: where the bytes go.
    ///   - format: what comes before each NAL unit.
    /// - Returns: the number of bytes written (``encodedByteCount``), or 0 when `destination`
    ///   is too small (nothing is written then).
    @discardableResult
    public func copyBytes(into destination: UnsafeMutableRawBufferPointer, format: Format = .avcc) -> Int {
        guard destination.count >= encodedByteCount, let base = destination.baseAddress else { return 0 }
        var offset = 0
        forEachPiece(format: format) { run in
            (base + offset).copyMemory(from: run.baseAddress!, byteCount: run.count)
            offset += run.count
        }
        return offset
    }

    /// The access unit in one array, laid out as `format` says.
    ///
    /// - Parameter format: what comes before each NAL unit.
    /// - Returns: ``encodedByteCount`` bytes.
    public func bytes(format: Format = .avcc) -> [UInt8] {
        guard encodedByteCount > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: encodedByteCount) { buffer, initialized in
            initialized = copyBytes(into: UnsafeMutableRawBufferPointer(buffer), format: format)
        }
    }

    /// The same access unit copied into one AVCC array, for APIs that take an ``AccessUnit``.
    public var accessUnit: AccessUnit {
        let header = header
        return AccessUnit(data: bytes(format: .avcc), nalUnitTypes: nalUnitTypes, streamOffset: header.streamOffset,
                          byteCount: header.byteCount, formatDescription: header.formatDescription,
                          formatChanged: header.formatChanged)
    }

    /// Calls `body` with each piece in order and its bytes (empty for a marker): the one walk
    /// over the pieces, which reaches each buffer's bytes once rather than once a piece.
    private func forEachRun(_ body: (Piece, UnsafeRawBufferPointer) throws -> Void) rethrows {
        try storage.withUnsafeMutablePointers { header, elements in
            let pieces = UnsafeBufferPointer(start: elements, count: header.pointee.pieceCount)
            try header.pointee.firstBuffer.withUnsafeBytes { first in
                try header.pointee.ownBytes.withUnsafeBytes { own in
                    for piece in pieces {
                        let range = Int(piece.start)..<Int(piece.start + piece.count)
                        switch piece.buffer {
                        case 0:
                            try body(piece, UnsafeRawBufferPointer(rebasing: first[range]))
                        case Piece.nalUnit:
                            try body(piece, UnsafeRawBufferPointer(start: nil, count: 0))
                        case Piece.literal:
                            var byte = UInt8(truncatingIfNeeded: piece.start)
                            try withUnsafeBytes(of: &byte) { try body(piece, $0) }
                        case Piece.own:
                            try body(piece, UnsafeRawBufferPointer(rebasing: own[range]))
                        default:
                            try header.pointee.otherBuffers[Int(piece.buffer) - 1].withUnsafeBytes {
                                try body(piece, UnsafeRawBufferPointer(rebasing: $0[range]))
                            }
                        }
                    }
                }
            }
        }
    }
}
