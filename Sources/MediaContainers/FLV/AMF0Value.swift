public import MediaCore
/// One value of Action Message Format 0 (AMF0 specification, Adobe 2007, clause 2): what RTMP
/// command and data messages (`connect`, `onStatus`, `@setDataFrame` …) and FLV script data
/// tags are made of.
///
/// Strings are written with the `string-marker` (2) up to 65,535 bytes of UTF-8 and with the
/// `long-string-marker` (0x0C) beyond; both read back as ``string(_:)``. Objects and ECMA arrays
/// keep their properties in order (servers read `code` from `onStatus`'s info object by name,
/// but order is what a byte-exact round trip needs).
public enum AMF0Value: Hashable, Sendable {
    /// `number-type` (marker 0): an IEEE 754 double.
    case number(Double)
    /// `boolean-type` (marker 1).
    case boolean(Bool)
    /// `string-type` (marker 2) or `long-string-type` (marker 0x0C): UTF-8 text.
    case string(String)
    /// `object-type` (marker 3): named properties, ended by `object-end-type` (marker 9).
    case object([AMF0Property])
    /// `null-type` (marker 5).
    case null
    /// `undefined-type` (marker 6).
    case undefined
    /// `ecma-array-type` (marker 8): an associative count, then named properties and the
    /// object end.
    case ecmaArray([AMF0Property])
    /// `strict-array-type` (marker 0x0A): a count, then that many values.
    case strictArray([AMF0Value])

    /// The type markers (AMF0 clause 2.1).
    package enum Marker {
        package static let number: UInt8 = 0x00
        package static let boolean: UInt8 = 0x01
        package static let string: UInt8 = 0x02
        package static let object: UInt8 = 0x03
        package static let null: UInt8 = 0x05
        package static let undefined: UInt8 = 0x06
        package static let ecmaArray: UInt8 = 0x08
        package static let objectEnd: UInt8 = 0x09
        package static let strictArray: UInt8 = 0x0A
        package static let longString: UInt8 = 0x0C
    }

    /// The value of the property `name` of an object or ECMA array; nil for other values or
    /// when there is none.
    public subscript(name: String) -> AMF0Value? {
        switch self {
        case .object(let properties), .ecmaArray(let properties): properties.first { $0.name == name }?.value
        default: nil
        }
    }

    /// The number, if this is one.
    public var number: Double? { if case .number(let value) = self { value } else { nil } }
    /// The string, if this is one.
    public var string: String? { if case .string(let value) = self { value } else { nil } }

    /// Appends the value's encoding.
    public func append(to output: inout [UInt8]) {
        switch self {
        case .number(let value):
            output.append(Marker.number)
            let bits = value.bitPattern
            for shift in stride(from: 56, through: 0, by: -8) { output.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        case .boolean(let value):
            output.append(Marker.boolean)
            output.append(value ? 1 : 0)
        case .string(let value):
            let utf8 = value.utf8
            if utf8.count > 0xFFFF {
                output.append(Marker.longString)
                BigEndian.append(utf8.count, count: 4, to: &output)
                output.append(contentsOf: utf8)
            } else {
                output.append(Marker.string)
                Self.appendName(value, to: &output)
            }
        case .object(let properties):
            output.append(Marker.object)
            Self.append(properties, to: &output)
        case .null:
            output.append(Marker.null)
        case .undefined:
            output.append(Marker.undefined)
        case .ecmaArray(let properties):
            output.append(Marker.ecmaArray)
            BigEndian.append(properties.count, count: 4, to: &output)
            Self.append(properties, to: &output)
        case .strictArray(let values):
            output.append(Marker.strictArray)
            BigEndian.append(values.count, count: 4, to: &output)
            for value in values { value.append(to: &output) }
        }
    }

    /// The value's encoding.
    public func serialized() -> [UInt8] {
        var output: [UInt8] = []
        append(to: &output)
        return output
    }

    /// The encodings of `values`, one after the other (a command or data message's payload).
    public static func serialized(_ values: [AMF0Value]) -> [UInt8] {
        var output: [UInt8] = []
        for value in values { value.append(to: &output) }
        return output
    }

    /// Properties, then the empty name and the object end marker (`00 00 09`). A name longer
    /// than 65,535 bytes is cut at a character boundary below that.
    private static func append(_ properties: [AMF0Property], to output: inout [UInt8]) {
        for property in properties {
            appendName(property.name, to: &output)
            property.value.append(to: &output)
        }
        output.append(contentsOf: [0, 0, Marker.objectEnd])
    }

    /// A UTF-8 string after its 16-bit length (`UTF-8` of AMF0 clause 1.3), cut to 65,535 bytes.
    private static func appendName(_ name: String, to output: inout [UInt8]) {
        var utf8 = Array(name.utf8)
        if utf8.count > 0xFFFF {
            var end = 0xFFFF
            while end > 0 && utf8[end] & 0xC0 == 0x80 { end -= 1 }
            utf8.removeSubrange(end...)
        }
        BigEndian.append(utf8.count, count: 2, to: &output)
        output.append(contentsOf: utf8)
    }
}

/// One named value of an AMF0 object or ECMA array.
public struct AMF0Property: Hashable, Sendable {
    /// The property's name.
    public var name: String
    /// The property's value.
    public var value: AMF0Value

    /// A property `name` of `value`.
    public init(_ name: String, _ value: AMF0Value) {
        self.name = name
        self.value = value
    }
}
