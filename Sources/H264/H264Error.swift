/// An error found while reading or writing H.264 data.
///
/// Every error carries a ``Code`` that names what went wrong, and — where it is known — the
/// syntax element being read (`field`), the byte offset in the input and the bit offset in the
/// RBSP being parsed. Codes are extensible values rather than enum cases, so new conditions can
/// be added without breaking clients (the approach of swift-asn1's `ASN1Error`).
///
/// "Need more bytes" is never an error: streaming readers wait for more input instead.
public struct H264Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable machine-readable value.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        /// The code's stable name, e.g. `"truncated"`.
        public var rawValue: String
        /// Creates a code from its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's stable name.
        public var description: String { rawValue }

        /// The data ended before a complete value could be read.
        public static let truncated = Code(rawValue: "truncated")
        /// A NAL unit header has `forbidden_zero_bit` set.
        public static let forbiddenZeroBit = Code(rawValue: "forbiddenZeroBit")
        /// A syntax element lies outside the range the specification allows.
        public static let valueOutOfRange = Code(rawValue: "valueOutOfRange")
        /// An Exp-Golomb code has 32 or more leading zero bits.
        public static let expGolombOverflow = Code(rawValue: "expGolombOverflow")
        /// A NAL unit has no bytes, or no payload where one is required.
        public static let emptyNALUnit = Code(rawValue: "emptyNALUnit")
        /// A length prefix (AVCC) runs past the end of the data.
        public static let lengthPastEnd = Code(rawValue: "lengthPastEnd")
        /// A NAL unit length size other than 1, 2 or 4 bytes.
        public static let invalidLengthSize = Code(rawValue: "invalidLengthSize")
        /// Annex-B data does not begin with a start code.
        public static let missingStartCode = Code(rawValue: "missingStartCode")
        /// An AVCDecoderConfigurationRecord is malformed.
        public static let invalidConfigurationRecord = Code(rawValue: "invalidConfigurationRecord")
        /// A parameter set refers to another that is not known (e.g. a PPS naming a missing SPS).
        public static let missingParameterSet = Code(rawValue: "missingParameterSet")
        /// A NAL unit is not of the type the operation requires.
        public static let unexpectedNALUnitType = Code(rawValue: "unexpectedNALUnitType")
        /// Valid H.264 that this library does not support (e.g. slice groups).
        public static let unsupported = Code(rawValue: "unsupported")
        /// An arithmetic result (sizes, macroblock counts) would overflow.
        public static let overflow = Code(rawValue: "overflow")
        /// The RBSP trailing bits are missing or malformed.
        public static let invalidTrailingBits = Code(rawValue: "invalidTrailingBits")
        /// A start code where a length prefix (AVCC) or an RTP payload's NAL unit header was
        /// expected: the writer put Annex-B there, and it is read as Annex-B (a warning; see
        /// ``AVCC/read(_:lengthSize:allowingEmptyNALUnits:)-(UnsafeRawBufferPointer,_,_)``).
        public static let unexpectedStartCode = Code(rawValue: "unexpectedStartCode")
    }

    /// What went wrong.
    public var code: Code
    /// The syntax element (spec name) or field being read, if any.
    public var field: String?
    /// The byte offset in the input where the problem was found, if known.
    public var byteOffset: Int?
    /// The bit offset within the RBSP being parsed, if known.
    public var bitOffset: Int?
    /// A human-readable explanation.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, field: String? = nil, byteOffset: Int? = nil, bitOffset: Int? = nil, _ message: String = "") {
        self.code = code
        self.field = field
        self.byteOffset = byteOffset
        self.bitOffset = bitOffset
        self.message = message
    }

    /// One line: the code, the field, where, and the explanation.
    public var description: String {
        var parts: [String] = []
        if let byteOffset { parts.append("at byte \(byteOffset)") }
        if let bitOffset { parts.append("bit \(bitOffset)") }
        var text = code.rawValue
        if let field { text += " in \(field)" }
        if !parts.isEmpty { text += " (" + parts.joined(separator: ", ") + ")" }
        if !message.isEmpty { text += ": " + message }
        return text
    }

    /// Returns a copy whose byte offset is shifted by `base` (or set to it when unknown).
    public func offset(by base: Int) -> H264Error {
        var copy = self
        copy.byteOffset = (byteOffset ?? 0) + base
        return copy
    }
}
