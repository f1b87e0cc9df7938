import H264
import H264TestSupport
import Testing
import RTMPMessages

/// The RTMP chunk stream (RTMP specification clause 5.3): the writer's bytes checked against
/// the header layouts of clause 5.3.1, the reader against the writer (whole, byte by byte,
/// interleaved), and every refusal of the reader with its code and field.
@Suite(.ownThread) struct RTMPChunkStreamTests {
    /// Reads every message of `bytes`, fed `step` bytes at a time.
    static func messages(_ bytes: [UInt8], step: Int = .max, reader: inout RTMPChunkReader) throws -> [RTMPMessage] {
        var messages: [RTMPMessage] = []
        var offset = 0
        repeat {
            let end = offset + min(step, bytes.count - offset)
            reader.append(bytes[offset..<end])
            offset = end
            while let message = try reader.nextMessage() { messages.append(message) }
        } while offset < bytes.count
        return messages
    }

    static func messages(_ bytes: [UInt8], step: Int = .max) throws -> [RTMPMessage] {
        var reader = RTMPChunkReader()
        return try messages(bytes, step: step, reader: &reader)
    }

    /// A command on chunk stream 3: basic header 0x03, an 11-byte type 0 header (timestamp 0,
    /// length 200, type 20, stream id 0 little-endian), 128 bytes, then `C3` and the other 72.
    @Test func typeZeroThenTypeThree() throws {
        var writer = RTMPChunkWriter()
        let payload = (0..<200).map { UInt8(truncatingIfNeeded: $0) }
        var bytes: [UInt8] = []
        try writer.append(RTMPMessage(type: .commandAMF0, messageStreamId: 1, payload: payload), chunkStreamId: 3, to: &bytes)
        #expect(Array(bytes.prefix(12)) == [0x03, 0, 0, 0, 0, 0, 200, 20, 1, 0, 0, 0])
        #expect(Array(bytes[12..<140]) == Array(payload.prefix(128)))
        #expect(bytes[140] == 0xC3)
        #expect(Array(bytes[141...]) == Array(payload.suffix(72)))
    }

    /// The next messages of a chunk stream: same length and type → type 2 (delta only), same
    /// delta again → type 3, another length → type 1.
    @Test func compressedHeaders() throws {
        var writer = RTMPChunkWriter()
        var bytes: [UInt8] = []
        let video = { (time: UInt32, count: Int) in RTMPMessage(type: .video, timestamp: time, messageStreamId: 1, payload: Array(repeating: 7, count: count)) }
        try writer.append(video(0, 4), chunkStreamId: 6, to: &bytes)
        #expect(bytes.count == 12 + 4)
        bytes = []
        try writer.append(video(40, 4), chunkStreamId: 6, to: &bytes)
        #expect(bytes == [0x86, 0, 0, 40, 7, 7, 7, 7])
        bytes = []
        try writer.append(video(80, 4), chunkStreamId: 6, to: &bytes)
        #expect(bytes == [0xC6, 7, 7, 7, 7])
        bytes = []
        try writer.append(video(120, 2), chunkStreamId: 6, to: &bytes)
        #expect(bytes == [0x46, 0, 0, 40, 0, 0, 2, 9, 7, 7])
    }

    /// Chunk stream ids in 1, 2 and 3 bytes (clause 5.3.1.1): 63, 64 (`00 00`), 319 (`00 FF`),
    /// 320 (`01 00 01`) and 65,599 (`01 FF FF`).
    @Test(arguments: [(63, [UInt8]([0x3F])), (64, [0x00, 0x00]), (319, [0x00, 0xFF]), (320, [0x01, 0x00, 0x01]), (65_599, [0x01, 0xFF, 0xFF])])
    func basicHeaders(id: Int, header: [UInt8]) throws {
        var writer = RTMPChunkWriter()
        var bytes: [UInt8] = []
        let message = RTMPMessage(type: .dataAMF0, timestamp: 5, messageStreamId: 1, payload: [1, 2, 3])
        try writer.append(message, chunkStreamId: id, to: &bytes)
        #expect(Array(bytes.prefix(header.count)) == header)
        #expect(try Self.messages(bytes) == [message])
    }

    /// A timestamp of 0xFFFFFF and above goes in the extended field, repeated after every type
    /// 3 basic header of the message.
    @Test func extendedTimestamp() throws {
        var writer = RTMPChunkWriter()
        var bytes: [UInt8] = []
        let message = RTMPMessage(type: .video, timestamp: 0x0100_0000, messageStreamId: 1, payload: Array(repeating: 1, count: 130))
        try writer.append(message, chunkStreamId: 4, to: &bytes)
        #expect(Array(bytes[1..<4]) == [0xFF, 0xFF, 0xFF])
        #expect(Array(bytes[12..<16]) == [0x01, 0, 0, 0])
        #expect(Array(bytes[144..<149]) == [0xC4, 0x01, 0, 0, 0])
        let next = RTMPMessage(type: .video, timestamp: 0x0100_0028, messageStreamId: 1, payload: [2])
        try writer.append(next, chunkStreamId: 4, to: &bytes)
        for step in [1, 7, .max] { #expect(try Self.messages(bytes, step: step) == [message, next]) }
    }

    /// Messages of several sizes, chunk sizes and chunk streams read back the same whatever
    /// the bytes' arrival, including after a Set Chunk Size in the middle.
    @Test(arguments: [1, 3, 128, 4096])
    func roundTrip(step: Int) throws {
        var writer = RTMPChunkWriter()
        var bytes: [UInt8] = []
        var sent: [RTMPMessage] = []
        for index in 0..<20 {
            if index == 7 {
                try writer.setChunkSize(4096, appendingTo: &bytes)
                sent.append(RTMPControlMessage.setChunkSize(4096).message)
            }
            let message = RTMPMessage(type: index % 3 == 0 ? .commandAMF0 : .video, timestamp: UInt32(index * 33),
                                      messageStreamId: 1, payload: (0..<(index * 379 % 9000)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try writer.append(message, chunkStreamId: index % 3 == 0 ? 3 : 6, to: &bytes)
            sent.append(message)
        }
        var reader = RTMPChunkReader()
        #expect(try Self.messages(bytes, step: step, reader: &reader) == sent)
        #expect(reader.chunkSize == 4096)
        #expect(reader.bufferedByteCount == 0)
    }

    /// Chunks of two messages interleaved on two chunk streams are reassembled apart.
    @Test func interleavedChunkStreams() throws {
        var writerA = RTMPChunkWriter(), writerB = RTMPChunkWriter()
        let a = RTMPMessage(type: .video, timestamp: 1, messageStreamId: 1, payload: Array(repeating: 0xA, count: 256))
        let b = RTMPMessage(type: .commandAMF0, timestamp: 2, messageStreamId: 0, payload: Array(repeating: 0xB, count: 200))
        var bytesA: [UInt8] = [], bytesB: [UInt8] = []
        try writerA.append(a, chunkStreamId: 6, to: &bytesA)
        try writerB.append(b, chunkStreamId: 3, to: &bytesB)
        // A's first chunk (12 + 128), B's first (12 + 128), A's second (1 + 128), B's second (1 + 72).
        let bytes = Array(bytesA[0..<140]) + Array(bytesB[0..<140]) + Array(bytesA[140...]) + Array(bytesB[140...])
        #expect(try Self.messages(bytes) == [a, b])
    }

    /// Every strict prefix of a message's chunks gives no message and consumes nothing it cannot
    /// finish; the rest then completes it.
    @Test func truncatedAtEveryOffset() throws {
        var writer = RTMPChunkWriter()
        var bytes: [UInt8] = []
        let message = RTMPMessage(type: .video, timestamp: 0x0100_0000, messageStreamId: 1, payload: Array(repeating: 9, count: 300))
        try writer.append(message, chunkStreamId: 320, to: &bytes)
        for cut in 0..<bytes.count {
            var reader = RTMPChunkReader()
            reader.append(bytes.prefix(cut))
            #expect(try reader.nextMessage() == nil, "cut at \(cut)")
            reader.append(bytes.dropFirst(cut))
            #expect(try reader.nextMessage() == message, "cut at \(cut)")
        }
    }

    /// Abort drops the partial message of its chunk stream; the next message there reads whole.
    @Test func abortDropsThePartialMessage() throws {
        var writer = RTMPChunkWriter(), control = RTMPChunkWriter()
        var bytes: [UInt8] = []
        try writer.append(RTMPMessage(type: .video, messageStreamId: 1, payload: Array(repeating: 1, count: 300)), chunkStreamId: 6, to: &bytes)
        bytes.removeSubrange(140...) // only the first chunk
        try control.append(RTMPControlMessage.abort(chunkStreamId: 6).message, chunkStreamId: 2, to: &bytes)
        let next = RTMPMessage(type: .video, timestamp: 40, messageStreamId: 1, payload: [5])
        writer.reset(chunkStreamId: 6)
        try writer.append(next, chunkStreamId: 6, to: &bytes)
        let messages = try Self.messages(bytes)
        #expect(messages.map(\.type) == [.abort, .video])
        #expect(messages.last == next)
    }

    /// The peer's Window Acknowledgement Size makes an acknowledgement due once that many bytes
    /// have come, with the byte count as its sequence number.
    @Test func acknowledgementWindow() throws {
        var writer = RTMPChunkWriter()
        var bytes: [UInt8] = []
        try writer.append(RTMPControlMessage.windowAcknowledgementSize(1000).message, chunkStreamId: 2, to: &bytes)
        var reader = RTMPChunkReader()
        _ = try Self.messages(bytes, reader: &reader)
        #expect(reader.windowAcknowledgementSize == 1000)
        #expect(reader.acknowledgementDue() == nil)
        var more: [UInt8] = []
        try writer.append(RTMPMessage(type: .video, messageStreamId: 1, payload: Array(repeating: 0, count: 1000)), chunkStreamId: 6, to: &more)
        _ = try Self.messages(more, reader: &reader)
        #expect(reader.acknowledgementDue() == UInt32(bytes.count + more.count))
        #expect(reader.acknowledgementDue() == nil)
    }

    /// A Set Chunk Size message with `size` as its payload, on chunk stream 2.
    static func setChunkSize(_ size: UInt32) -> [UInt8] {
        [0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
    }

    static let malformed: [MalformedCase] = [
        MalformedCase("Set Chunk Size 0", .rtmpChunkSizeOutOfRange, field: "chunk size") { _ = try messages(setChunkSize(0)) },
        MalformedCase("Set Chunk Size 2^31", .rtmpChunkSizeOutOfRange, field: "chunk size") { _ = try messages(setChunkSize(0x8000_0000)) },
        MalformedCase("Set Chunk Size of 2 bytes", .invalidRTMPMessage, field: "chunk size") {
            _ = try messages([0x02, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 1])
        },
        MalformedCase("message length beyond the limit", .rtmpMessageTooLarge, field: "message length") {
            // 16 MiB − 1 announced against a bound of 1 MiB: refused before any payload comes.
            var reader = RTMPChunkReader(maximumMessageLength: 1 << 20)
            _ = try messages([0x03, 0, 0, 0, 0xFF, 0xFF, 0xFF, 9, 1, 0, 0, 0], reader: &reader)
        },
        MalformedCase("type 1 chunk on a new chunk stream", .invalidRTMPChunk, field: "fmt") {
            _ = try messages([0x43, 0, 0, 0, 0, 0, 1, 9, 0xAA])
        },
        MalformedCase("type 3 chunk on a new chunk stream", .invalidRTMPChunk, field: "fmt") { _ = try messages([0xC5, 0xAA]) },
        MalformedCase("length changed inside a message", .invalidRTMPChunk, field: "message length") {
            var bytes: [UInt8] = [0x03, 0, 0, 0, 0, 1, 0, 9, 1, 0, 0, 0] + Array(repeating: 0, count: 128)
            bytes += [0x43, 0, 0, 0, 0, 2, 0, 9]
            _ = try messages(bytes)
        },
        MalformedCase("65 chunk streams with a partial message", .invalidRTMPChunk, field: "chunk stream id") {
            var bytes: [UInt8] = []
            for id in 3..<(3 + 65) {
                var writer = RTMPChunkWriter()
                var one: [UInt8] = []
                try writer.append(RTMPMessage(type: .video, payload: Array(repeating: 0, count: 200)), chunkStreamId: id, to: &one)
                bytes += one.prefix((id < 64 ? 12 : 13) + 128) // the type 0 header and the first chunk only
            }
            _ = try messages(bytes)
        },
        MalformedCase("unfinished messages beyond the limit together", .rtmpMessageTooLarge, field: "partial messages") {
            // Ten messages of 600 bytes each left unfinished after 500 bytes, against a bound of
            // 4,096 bytes for all of them: the ninth chunk passes it (each alone is within it).
            var reader = RTMPChunkReader(maximumMessageLength: 4096)
            var bytes = setChunkSize(500)
            for id in 3..<13 {
                var writer = RTMPChunkWriter()
                var one: [UInt8] = []
                try writer.setChunkSize(500, appendingTo: &one)
                one = []
                try writer.append(RTMPMessage(type: .video, payload: Array(repeating: 0, count: 600)), chunkStreamId: id, to: &one)
                bytes += one.prefix(12 + 500) // the type 0 header and the first chunk only
            }
            _ = try messages(bytes, reader: &reader)
        },
    ]

    @Test(arguments: malformed) func rejects(_ item: MalformedCase) { item.expectRejected() }

    /// Unfinished messages count against the bound only while they are unfinished: twenty
    /// messages on two chunk streams, each finished in turn, go through a bound one message wide.
    @Test func finishedMessagesLeaveTheBound() throws {
        var writer = RTMPChunkWriter()
        var bytes: [UInt8] = []
        let messages = (0..<20).map { RTMPMessage(type: .video, messageStreamId: 1, payload: Array(repeating: UInt8($0), count: 1000)) }
        for (index, message) in messages.enumerated() { try writer.append(message, chunkStreamId: 3 + index % 2, to: &bytes) }
        var reader = RTMPChunkReader(maximumMessageLength: 1000)
        #expect(try Self.messages(bytes, reader: &reader).map(\.payload) == messages.map(\.payload))
    }

    /// The writer's chunk size is 1…65,536; it refuses a payload over 24 bits and a chunk stream
    /// id outside 2…65,599, writing nothing.
    @Test func writerChunkSizeBounds() throws {
        var writer = RTMPChunkWriter()
        var bytes: [UInt8] = []
        #expect(throws: MediaError.self) { try writer.setChunkSize(0, appendingTo: &bytes) }
        #expect(throws: MediaError.self) { try writer.setChunkSize(65_537, appendingTo: &bytes) }
        #expect(bytes.isEmpty)
        try writer.setChunkSize(65_536, appendingTo: &bytes)
        #expect(bytes == Self.setChunkSize(65_536))
        bytes = []
        #expect { try writer.append(RTMPMessage(type: .video, payload: Array(repeating: 0, count: 1 << 24)), chunkStreamId: 6, to: &bytes) }
            throws: { ($0 as? MediaError)?.code == .rtmpMessageTooLarge }
        #expect { try writer.append(RTMPMessage(type: .video, payload: []), chunkStreamId: 1, to: &bytes) }
            throws: { ($0 as? MediaError)?.code == .valueOutOfRange }
        #expect(bytes.isEmpty)
    }
}
