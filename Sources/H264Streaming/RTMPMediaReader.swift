import H264
import MediaContainers
import RTMPMessages

/// Video and audio messages (types 9 and 8: FLV video and audio tag bodies) read as FLV tags by
/// `FLVReader` (module `MediaContainers`), the one reader of FLV: what ``RTMPIngestServer``'s
/// publishers and ``RTMPPlayer`` hand out. Each message becomes a tag (header, body,
/// PreviousTagSize) after a file header, so the events — video format changes, frames of both
/// media (`FLVReader.Event.frame`), end of sequence, skipped tags — are those an FLV file gives.
struct RTMPMediaReader {
    private var flv = FLVReader()

    init() {
        var header = FLVWriter()                  // the file header and PreviousTagSize0
        flv.append(header.takeBytes())
    }

    /// The events of one video or audio message (none for another message type, or a message
    /// that cannot be a tag).
    mutating func events(of message: RTMPMessage) -> [FLVReader.Event] {
        let type: FLVTagHeader.TagType
        switch message.type {
        case .video: type = .video
        case .audio: type = .audio
        default: return []
        }
        var tag: [UInt8] = []
        tag.reserveCapacity(message.payload.count + FLVTagHeader.size + 4)
        guard (try? FLVTagHeader(tagType: type, dataSize: message.payload.count, timestamp: message.timestamp).append(to: &tag)) != nil else {
            return []
        }
        tag.append(contentsOf: message.payload)
        let previousTagSize = UInt32(FLVTagHeader.size + message.payload.count)
        tag.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: previousTagSize >> (24 - 8 * $0)) })
        flv.append(tag)
        return drain()
    }

    /// The events of what is left (a cut-off tag is reported) once the stream ends.
    mutating func finish() -> [FLVReader.Event] {
        flv.finish()
        return drain()
    }

    private mutating func drain() -> [FLVReader.Event] {
        var events: [FLVReader.Event] = []
        while let event = try? flv.next() { events.append(event) }
        return events
    }
}
