/// Length-prefixed (AVCC) data read as it is found in real files: the NAL units, and what was
/// read past to get them.
///
/// A writer that put Annex-B where lengths belong (Chrome's MediaRecorder in MP4/Matroska
/// samples) is read as FFmpeg's decoder reads it: from the start code on, as Annex-B, with one
/// ``MediaError/Code/unexpectedStartCode`` warning. The rule is `EmbeddedAnnexB`'s (see
/// ``AVCC/read(_:lengthSize:allowingEmptyNALUnits:)-(UnsafeRawBufferPointer,_,_)``), the same one
/// `RTPDepacketizer` follows for payloads that begin with a start code.
public struct AVCCReading: Hashable, Sendable {
    /// The byte range of each NAL unit, header byte first, in order.
    public var nalUnits: [Range<Int>]
    /// Where the data turned out to be Annex-B: the offset of the start code found where a
    /// length was expected; `nil` when every NAL unit had its length.
    public var annexBOffset: Int?
    /// Tolerated problems: the one ``MediaError/Code/unexpectedStartCode`` warning when
    /// ``annexBOffset`` is set.
    public var warnings: [MediaError]
    /// Damaged NAL units of the Annex-B part (`forbidden_zero_bit` set), each reported and left
    /// out of ``nalUnits``.
    public var skipped: [MediaError]

    /// Creates a reading.
    public init(nalUnits: [Range<Int>], annexBOffset: Int? = nil, warnings: [MediaError] = [], skipped: [MediaError] = []) {
        self.nalUnits = nalUnits
        self.annexBOffset = annexBOffset
        self.warnings = warnings
        self.skipped = skipped
    }
}

extension AVCC {
    /// Reads length-prefixed data — one sample or a whole raw AVCC stream — tolerating Annex-B
    /// where lengths were expected.
    ///
    /// Where a length field begins with a start code (`00 00 01` or `00 00 00 01`) and the
    /// lengths from there fail before three whole NAL units (or before the end, when fewer
    /// remain), the rest of the data is read as Annex-B: one warning
    /// (``MediaError/Code/unexpectedStartCode``, at the start code's offset), and each unit there
    /// whose `forbidden_zero_bit` is set is reported in ``AVCCReading/skipped`` and left out.
    /// A genuine length of 256–511 bytes (`00 00 01 xx` with 4-byte lengths) stays a length.
    ///
    /// Costs what ``nalUnits(in:lengthSize:allowingEmptyNALUnits:)-(UnsafeRawBufferPointer,_,_)``
    /// costs, plus at most three more length fields read, the first time a length field begins
    /// like a start code.
    ///
    /// - Parameters:
    ///   - buffer: One sample (access unit) or a whole raw AVCC stream.
    ///   - lengthSize: The size of each length prefix: 1, 2 or 4.
    ///   - allowingEmptyNALUnits: When true, zero-length NAL units are skipped instead of
    ///     rejected.
    /// - Throws: the errors of ``nalUnits(in:lengthSize:allowingEmptyNALUnits:)-(UnsafeRawBufferPointer,_,_)``
    ///   when the framing is lost in the length-prefixed part.
    public static func read(_ buffer: UnsafeRawBufferPointer, lengthSize: Int,
                            allowingEmptyNALUnits: Bool = false) throws(MediaError) -> AVCCReading {
        var reading = AVCCReading(nalUnits: [])
        let annexBOffset = try walk(buffer, lengthSize: lengthSize, allowingEmptyNALUnits: allowingEmptyNALUnits,
                                    toleratingAnnexB: true) { _, range in
            if !range.isEmpty { reading.nalUnits.append(range) }
        }
        if let annexBOffset {
            reading.annexBOffset = annexBOffset
            reading.warnings.append(EmbeddedAnnexB.warning(byteOffset: annexBOffset, expected: "NALUnitLength",
                                                           "\(lengthSize)-byte NAL unit length"))
            EmbeddedAnnexB.forEachNALUnit(in: buffer, from: annexBOffset, { reading.nalUnits.append($0) },
                                          damaged: { reading.skipped.append($0) })
        }
        return reading
    }

    /// Reads length-prefixed data, tolerating Annex-B where lengths were expected.
    ///
    /// See ``read(_:lengthSize:allowingEmptyNALUnits:)-(UnsafeRawBufferPointer,_,_)``.
    public static func read(_ bytes: [UInt8], lengthSize: Int, allowingEmptyNALUnits: Bool = false) throws(MediaError) -> AVCCReading {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(MediaError) in
                try read(buffer, lengthSize: lengthSize, allowingEmptyNALUnits: allowingEmptyNALUnits)
            }
        }
        return try result.get()
    }
}
