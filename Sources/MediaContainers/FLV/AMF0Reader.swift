public import MediaCore
/// Decodes AMF0 values (AMF0 specification clause 2) with bounds: nesting at most
/// ``maximumDepth`` deep, at most ``maximumValues`` values in all, and every length and count
/// checked against the bytes that remain before anything is allocated for it.
///
/// ```swift
/// var reader = AMF0Reader(message.payload)
/// let values = try reader.readAll()          // e.g. ["_result", 1, {…}, {code: …}]
/// ```
///
/// Errors carry the byte offset in the input: `MediaError.Code.truncated` when a value runs
/// past the end (a string longer than the message), `MediaError.Code.invalidAMF0` for an
/// unknown or unsupported marker (reference, date, XML, typed object, AVM+), a count that the
/// remaining bytes cannot hold, or nesting past the bound.
public struct AMF0Reader {
    /// The deepest nesting of objects and arrays read (the top level is depth 1).
    public static let maximumDepth = 32
    /// The most values (properties and elements included) one reader reads.
    public static let maximumValues = 65_536

    private let bytes: [UInt8]
    /// The offset of the next byte to read.
    public private(set) var offset = 0
    private var valuesRead = 0

    /// A reader of `bytes` (copied once).
    public init(_ bytes: some Collection<UInt8>) { self.bytes = Array(bytes) }

    /// True when every byte has been read.
    public var isAtEnd: Bool { offset >= bytes.count }

    /// Reads one value.
    ///
    /// - Throws: `MediaError.Code.truncated` or `MediaError.Code.invalidAMF0` (field and byte
    ///   offset named); the reader's offset is then unspecified.
    public mutating func read() throws(MediaError) -> AMF0Value {
        try readValue(depth: 1)
    }

    /// Reads values until the end of the input.
    ///
    /// - Throws: as ``read()``.
    public mutating func readAll() throws(MediaError) -> [AMF0Value] {
        var values: [AMF0Value] = []
        while !isAtEnd { values.append(try read()) }
        return values
    }

    private mutating func readValue(depth: Int) throws(MediaError) -> AMF0Value {
        guard depth <= Self.maximumDepth else {
            throw MediaError(.invalidAMF0, field: "value", byteOffset: offset, "nested deeper than \(Self.maximumDepth)")
        }
        valuesRead += 1
        guard valuesRead <= Self.maximumValues else {
            throw MediaError(.invalidAMF0, field: "value", byteOffset: offset, "more than \(Self.maximumValues) values")
        }
        let markerOffset = offset
        let marker = try readByte(field: "type-marker")
        switch marker {
        case AMF0Value.Marker.number:
            let raw = try readBytes(8, field: "number-type")
            var bits: UInt64 = 0
            for byte in raw { bits = bits << 8 | UInt64(byte) }
            return .number(Double(bitPattern: bits))
        case AMF0Value.Marker.boolean:
            return .boolean(try readByte(field: "boolean-type") != 0)
        case AMF0Value.Marker.string:
            return .string(try readUTF8(lengthSize: 2, field: "string-type"))
        case AMF0Value.Marker.longString:
            return .string(try readUTF8(lengthSize: 4, field: "long-string-type"))
        case AMF0Value.Marker.object:
            return .object(try readProperties(depth: depth, field: "object-type"))
        case AMF0Value.Marker.null:
            return .null
        case AMF0Value.Marker.undefined:
            return .undefined
        case AMF0Value.Marker.ecmaArray:
            // The associative count is a hint (FFmpeg and nginx-rtmp ignore it too): the
            // properties run to the object end.
            _ = try readBytes(4, field: "associative-count")
            return .ecmaArray(try readProperties(depth: depth, field: "ecma-array-type"))
        case AMF0Value.Marker.strictArray:
            let countOffset = offset
            let countBytes = try readBytes(4, field: "array-count")
            let count = BigEndian.read(countBytes, at: countBytes.startIndex, count: 4)
            // Each value is at least its marker: a count the rest cannot hold is refused before
            // anything is reserved for it.
            guard count <= bytes.count - offset else {
                throw MediaError(.invalidAMF0, field: "array-count", byteOffset: countOffset,
                                "\(count) values but \(bytes.count - offset) bytes remain")
            }
            var values: [AMF0Value] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try readValue(depth: depth + 1)) }
            return .strictArray(values)
        default:
            throw MediaError(.invalidAMF0, field: "type-marker", byteOffset: markerOffset,
                            "marker \(marker) is not a type this reader reads")
        }
    }

    /// Named values up to the empty name and the object end marker.
    private mutating func readProperties(depth: Int, field: String) throws(MediaError) -> [AMF0Property] {
        var properties: [AMF0Property] = []
        while true {
            let nameOffset = offset
            let name = try readUTF8(lengthSize: 2, field: "\(field) property name")
            if name.isEmpty {
                guard !isAtEnd, bytes[offset] == AMF0Value.Marker.objectEnd else {
                    // An empty name before a value: tolerated by nobody we know; read it as the
                    // end would lose the framing, so it is an error unless the end follows.
                    if isAtEnd { throw MediaError(.truncated, field: "object-end-marker", byteOffset: offset, "the object has no end marker") }
                    throw MediaError(.invalidAMF0, field: "object-end-marker", byteOffset: nameOffset,
                                    "an empty property name not followed by the object end")
                }
                offset += 1
                return properties
            }
            properties.append(AMF0Property(name, try readValue(depth: depth + 1)))
        }
    }

    /// A UTF-8 string after its `lengthSize`-byte length; invalid UTF-8 is repaired (U+FFFD).
    private mutating func readUTF8(lengthSize: Int, field: String) throws(MediaError) -> String {
        let lengthOffset = offset
        let lengthBytes = try readBytes(lengthSize, field: field)
        let length = BigEndian.read(lengthBytes, at: lengthBytes.startIndex, count: lengthSize)
        guard length <= bytes.count - offset else {
            throw MediaError(.truncated, field: field, byteOffset: lengthOffset,
                            "a string of \(length) bytes but \(bytes.count - offset) remain")
        }
        defer { offset += length }
        return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
    }

    private mutating func readByte(field: String) throws(MediaError) -> UInt8 {
        let bytes = try readBytes(1, field: field)
        return bytes[bytes.startIndex]
    }

    private mutating func readBytes(_ count: Int, field: String) throws(MediaError) -> ArraySlice<UInt8> {
        guard count <= bytes.count - offset else {
            throw MediaError(.truncated, field: field, byteOffset: offset, "\(count) bytes needed, \(bytes.count - offset) remain")
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }
}
