/// An error found while reading or writing media: an H.264 or H.265 bitstream, a container, an
/// RTP, RTSP or RTMP message, or reported by a session. The one error type of the package.
///
/// Every error carries a ``Code`` that names what went wrong, and — where it is known — the
/// syntax element being read (`field`), the byte offset in the input and the bit offset in the
/// RBSP being parsed. Codes are extensible values rather than enum cases, so new conditions can
/// be added without breaking clients (the approach of swift-asn1's `ASN1Error`).
///
/// "Need more bytes" is never an error: streaming readers wait for more input instead.
public struct MediaError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable machine-readable value. The core's codes are listed
    /// together (`MediaErrorCodes.swift`); other modules add their own the same way.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        /// The code's stable name, e.g. `"truncated"`.
        public var rawValue: String
        /// Creates a code from its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's stable name.
        public var description: String { rawValue }
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
    public func offset(by base: Int) -> MediaError {
        var copy = self
        copy.byteOffset = (byteOffset ?? 0) + base
        return copy
    }
}

/// The error type's name before 0.2.0, when it was H.264's alone.
@available(*, deprecated, renamed: "MediaError")
public typealias H264Error = MediaError
