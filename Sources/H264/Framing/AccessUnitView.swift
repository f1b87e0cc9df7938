/// An access unit that refers to the bytes of the packets it arrived in, instead of holding a
/// copy of them: the counterpart of a `CMBlockBuffer` made of several memory blocks.
///
/// ``RTPZeroCopyDepacketizer`` hands these out. Its NAL units are pieces of the received
/// buffers (a fragmented NAL unit is one piece per FU-A, after its rebuilt header byte), kept
/// alive by the view, so the bytes are copied once, into wherever they go: a decoder's input
/// buffer (``copyBytes(into:format:)``), a file or socket (``forEachPiece(format:_:)``), or an
/// ``AccessUnit`` when an API needs one (``accessUnit``).
///
/// It has the same NAL units, types, format and stream offsets as the ``AccessUnit`` that
/// ``RTPDepacketizer`` builds from the same packets; ``accessUnit`` is that access unit.
public struct AccessUnitView: Sendable {
    /// The type of each NAL unit, in order.
    public let nalUnitTypes: [NALUnitType]
    /// Where the access unit begins in the stream of NAL units received so far, counted in AVCC
    /// form with 4-byte lengths (as ``AccessUnit/streamOffset`` of the depacketizer's access
    /// units).
    public let streamOffset: Int
    /// How many bytes of that stream the access unit covers (as ``AccessUnit/byteCount``).
    public let byteCount: Int
    /// The format (SPS and PPS) the access unit's first slice refers to, when they are known.
    public let formatDescription: FormatDescription?
    /// True when ``formatDescription`` differs from the previous access unit's that had one.
    public let formatChanged: Bool
    /// The size of the access unit with a 4-byte length (AVCC) or a 4-byte start code (Annex-B)
    /// before each NAL unit: what ``copyBytes(into:format:)`` writes.
    public let encodedByteCount: Int

    /// The first received buffer the pieces refer to (most access units need no other), and
    /// the others.
    let firstBuffer: [UInt8]
    let otherBuffers: [[UInt8]]
    /// Bytes that were not in any received buffer as they are in the NAL unit: NAL units
    /// gathered before they could be placed (a fragmented parameter set, say).
    let ownBytes: [UInt8]
    /// For each NAL unit in order, a ``Piece/nalUnit`` marker holding its size, then its pieces.
    /// A piece's `buffer` is 0 for `firstBuffer`, i ≥ 1 for `otherBuffers[i - 1]`,
    /// ``Piece/own`` for `ownBytes`, or ``Piece/literal`` for the one byte in its `start` (the
    /// rebuilt header byte of a fragmented NAL unit). One array, so that an access unit costs
    /// few allocations.
    let pieces: [Piece]
    /// How many NAL units the access unit holds.
    public let nalUnitCount: Int

    /// A run of bytes of one buffer, or the marker before a NAL unit's pieces.
    struct Piece: Sendable {
        /// The buffer for ``AccessUnitView/ownBytes``.
        static let own: Int32 = -1
        /// The buffer of a one-byte piece whose byte is its `start`.
        static let literal: Int32 = -2
        /// The buffer of the marker before a NAL unit, whose `count` is the NAL unit's size.
        static let nalUnit: Int32 = -3
        var buffer: Int32
        var start: Int32
        var count: Int32
    }

    /// How the NAL units are laid out when written out.
    public enum Format: Sendable {
        /// Each NAL unit after its size as a 4-byte big-endian number (as ``AccessUnit/data``).
        case avcc
        /// Each NAL unit after a 4-byte start code (`00 00 00 01`), as an Annex-B byte stream.
        case annexB
    }

    /// True when the access unit holds an IDR picture.
    public var isIDR: Bool { nalUnitTypes.contains(.idrSlice) }
    /// True when the access unit holds at least one VCL NAL unit (coded slice data).
    public var hasPicture: Bool { nalUnitTypes.contains { $0.isVCL } }

    /// Calls `body` with each run of bytes of the access unit in order: for each NAL unit, its
    /// 4-byte length or start code, then its pieces. Nothing is copied; the pointers are valid
    /// only during the call.
    ///
    /// - Parameters:
    ///   - format: what comes before each NAL unit.
    ///   - body: called with each run of bytes, never with an empty one.
    public func forEachPiece(format: Format = .avcc, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        for piece in pieces {
            if piece.buffer == Piece.nalUnit {
                var prefix: UInt32 = switch format {
                case .avcc: UInt32(piece.count).bigEndian
                case .annexB: UInt32(1).bigEndian
                }
                try withUnsafeBytes(of: &prefix) { try body($0) }
            } else {
                try withPiece(piece, body)
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
        [UInt8](unsafeUninitializedCapacity: encodedByteCount) { buffer, initialized in
            initialized = copyBytes(into: UnsafeMutableRawBufferPointer(buffer), format: format)
        }
    }

    /// The same access unit copied into one AVCC array, for APIs that take an ``AccessUnit``.
    public var accessUnit: AccessUnit {
        AccessUnit(data: bytes(format: .avcc), nalUnitTypes: nalUnitTypes, streamOffset: streamOffset,
                   byteCount: byteCount, formatDescription: formatDescription, formatChanged: formatChanged)
    }

    private func withPiece(_ piece: Piece, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        let range = Int(piece.start)..<Int(piece.start + piece.count)
        if piece.buffer == Piece.literal {
            var byte = UInt8(truncatingIfNeeded: piece.start)
            try withUnsafeBytes(of: &byte) { try body($0) }
        } else if piece.buffer == Piece.own {
            try ownBytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
        } else if piece.buffer == 0 {
            try firstBuffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
        } else {
            try otherBuffers[Int(piece.buffer) - 1].withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
        }
    }
}
