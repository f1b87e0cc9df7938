import H264
import H264TestSupport
import Testing
import MediaContainers

/// AMF0 (AMF0 specification, Adobe 2007, clause 2): byte vectors written from the spec's type
/// table, round trips, and the bounded decoder's refusals — each with its code and field.
@Suite(.ownThread) struct AMF0Tests {
    static let one: [UInt8] = [0x3F, 0xF0, 0, 0, 0, 0, 0, 0] // 1.0 as IEEE 754 big-endian

    /// Each type's encoding, from the marker table (number 0, boolean 1, string 2, object 3,
    /// null 5, undefined 6, ECMA array 8, object end 9, strict array 0x0A).
    @Test func knownEncodings() throws {
        let cases: [(AMF0Value, [UInt8])] = [
            (.number(1), [0x00] + Self.one),
            (.boolean(true), [0x01, 0x01]),
            (.boolean(false), [0x01, 0x00]),
            (.string("app"), [0x02, 0x00, 0x03, 0x61, 0x70, 0x70]),
            (.string(""), [0x02, 0x00, 0x00]),
            (.null, [0x05]),
            (.undefined, [0x06]),
            (.object([AMF0Property("a", .number(1))]), [0x03, 0x00, 0x01, 0x61, 0x00] + Self.one + [0, 0, 9]),
            (.ecmaArray([AMF0Property("a", .null)]), [0x08, 0, 0, 0, 1, 0x00, 0x01, 0x61, 0x05, 0, 0, 9]),
            (.strictArray([.null, .boolean(true)]), [0x0A, 0, 0, 0, 2, 0x05, 0x01, 0x01]),
        ]
        for (value, bytes) in cases {
            #expect(value.serialized() == bytes, "\(value)")
            var reader = AMF0Reader(bytes)
            #expect(try reader.read() == value)
            #expect(reader.isAtEnd)
        }
    }

    /// A string over 65,535 bytes is a long string (marker 0x0C, 32-bit length) and reads back
    /// as the same string.
    @Test func longString() throws {
        let text = String(repeating: "x", count: 70_000)
        let bytes = AMF0Value.string(text).serialized()
        #expect(bytes.prefix(5) == [0x0C, 0x00, 0x01, 0x11, 0x70])
        #expect(bytes.count == 5 + 70_000)
        var reader = AMF0Reader(bytes)
        #expect(try reader.read() == .string(text))
    }

    /// Nested values survive a round trip, and the `connect` command reads back as written.
    @Test func nestedRoundTrip() throws {
        let value = AMF0Value.object([
            AMF0Property("list", .strictArray([.number(-2.5), .string("ü"), .object([AMF0Property("x", .undefined)])])),
            AMF0Property("map", .ecmaArray([AMF0Property("k", .boolean(false))])),
        ])
        var reader = AMF0Reader(value.serialized() + AMF0Value.null.serialized())
        #expect(try reader.readAll() == [value, .null])
        #expect(value["map"]?["k"] == .boolean(false))
        #expect(value["none"] == nil)
    }

    /// The FLV `onMetaData` script data is AMF0 and reads back through the same decoder.
    @Test func flvMetadataIsAMF0() throws {
        let metadata = FLVMetadata(width: 320, height: 192, frameRate: 25)
        var reader = AMF0Reader(metadata.serialized())
        let values = try reader.readAll()
        #expect(values.first == .string("onMetaData"))
        #expect(values[1]["width"] == .number(320))
        #expect(values[1]["framerate"] == .number(25))
        #expect(values[1]["videocodecid"] == .number(7))
    }

    static let malformed: [MalformedCase] = [
        MalformedCase("string longer than the message", .truncated, field: "string-type") {
            var reader = AMF0Reader([0x02, 0x00, 0x10, 0x61])
            _ = try reader.read()
        },
        MalformedCase("long string of 4 GiB − 1", .truncated, field: "long-string-type") {
            var reader = AMF0Reader([0x0C, 0xFF, 0xFF, 0xFF, 0xFF, 0x61])
            _ = try reader.read()
        },
        MalformedCase("strict array counting more values than bytes", .invalidAMF0, field: "array-count") {
            var reader = AMF0Reader([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x05])
            _ = try reader.read()
        },
        MalformedCase("object without its end", .truncated, field: "object-type property name") {
            var reader = AMF0Reader([0x03, 0x00, 0x01, 0x61, 0x05])
            _ = try reader.read()
        },
        MalformedCase("empty name not followed by the end marker", .invalidAMF0, field: "object-end-marker") {
            var reader = AMF0Reader([0x03, 0x00, 0x00, 0x05])
            _ = try reader.read()
        },
        MalformedCase("unknown marker (0x11, AVM+)", .invalidAMF0, field: "type-marker") {
            var reader = AMF0Reader([0x11])
            _ = try reader.read()
        },
        MalformedCase("number cut short", .truncated, field: "number-type") {
            var reader = AMF0Reader([0x00, 0x3F, 0xF0])
            _ = try reader.read()
        },
        MalformedCase("nesting 33 deep", .invalidAMF0, field: "value") {
            var reader = AMF0Reader(Array(repeating: [0x0A, 0, 0, 0, 1], count: 40).flatMap { $0 } + [0x05])
            _ = try reader.read()
        },
    ]

    @Test(arguments: malformed) func rejects(_ item: MalformedCase) { item.expectRejected() }

    /// Every strict prefix of a valid encoding is refused as truncated (never a crash, never a
    /// value).
    @Test func truncatedAtEveryOffset() throws {
        let bytes = AMF0Value.serialized([.string("connect"), .number(1), .object([
            AMF0Property("app", .string("live")), AMF0Property("tcUrl", .string("rtmp://127.0.0.1/live")),
        ])])
        for length in 0..<bytes.count {
            var reader = AMF0Reader(bytes.prefix(length))
            do {
                let values = try reader.readAll()
                // A prefix may end between whole values: then it is fewer values, not garbage.
                #expect(values.count < 3, "prefix \(length)")
            } catch {
                #expect(error.code == .truncated, "prefix \(length): \(error)")
            }
        }
    }
}
