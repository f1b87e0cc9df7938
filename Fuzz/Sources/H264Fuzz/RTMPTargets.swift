import H264
import MediaContainers
import RTMPMessages

extension FuzzTarget {
    /// The input as the bytes of an RTMP connection after the handshake (`RTMPChunkReader`),
    /// whole and in chunks whose sizes come from the first byte: the same messages and the same
    /// error; no message beyond the reader's bound; the messages written again by
    /// `RTMPChunkWriter` read back the same; every command and data payload goes through the
    /// AMF0 target.
    static func rtmpChunks(_ bytes: [UInt8]) {
        let bound = 1 << 16
        func read(chunkSize: Int) -> (messages: [RTMPMessage], error: MediaError.Code?) {
            var reader = RTMPChunkReader(maximumMessageLength: bound)
            var messages: [RTMPMessage] = []
            var offset = 0
            repeat {
                let end = min(bytes.count, offset + chunkSize)
                reader.append(bytes[offset..<end])
                offset = end
                do {
                    while let message = try reader.nextMessage() { messages.append(message) }
                } catch {
                    return (messages, error.code)
                }
            } while offset < bytes.count
            return (messages, nil)
        }
        let whole = read(chunkSize: max(bytes.count, 1))
        let chunked = read(chunkSize: Int(bytes.first ?? 0) % 17 + 1)
        check(whole.messages == chunked.messages && whole.error == chunked.error, "chunking changed the messages or the error")
        var writer = RTMPChunkWriter()
        var written: [UInt8] = []
        for message in whole.messages {
            check(message.payload.count <= bound, "a message of \(message.payload.count) bytes")
            guard message.type != .setChunkSize, message.type != .abort else { continue }
            check((try? writer.append(message, chunkStreamId: 3 + Int(message.type.rawValue % 8), to: &written)) != nil, "a read message cannot be written")
            if message.type == .commandAMF0 || message.type == .dataAMF0 { amf0(message.payload) }
        }
        var reader = RTMPChunkReader(maximumMessageLength: bound)
        reader.append(written)
        var again: [RTMPMessage] = []
        while let message = try? reader.nextMessage() { again.append(message) }
        check(again == whole.messages.filter { $0.type != .setChunkSize && $0.type != .abort }, "written messages read back differently")
    }

    /// The input as AMF0 values (`AMF0Reader.readAll`): never traps; what it reads, written and
    /// read again, writes the same bytes (strings may change form once: long to short, invalid
    /// UTF-8 repaired); `RTMPCommand(parsing:)` reads or throws.
    static func amf0(_ bytes: [UInt8]) {
        var reader = AMF0Reader(bytes)
        if let values = try? reader.readAll() {
            let written = AMF0Value.serialized(values)
            var again = AMF0Reader(written)
            guard let reread = try? again.readAll() else { return check(false, "written values do not read back") }
            check(AMF0Value.serialized(reread) == written, "AMF0 round trip differs")
        }
        _ = try? RTMPCommand(parsing: bytes)
    }
}
