import H264
import MediaContainers

extension FuzzTarget {
    /// `FLVAudioTag(parsing:)` on the input as one audio tag body, then the input cut into
    /// bodies (a length byte before each) as the audio tags of an FLV file read by `FLVReader`.
    ///
    /// Properties: a body either parses and is written back byte for byte (the
    /// `AudioSpecificConfig` is kept whole, the header byte's fields as they came) or is refused
    /// with a named field at an offset inside it; in the file every body is exactly one of a
    /// frame (its bytes the body's after the tag header, in the audio format in force), a
    /// skipped tag (offset inside the file) or an AAC sequence header (no event); nothing is
    /// fatal and no tag is ignored.
    static func flvAudio(_ bytes: [UInt8]) {
        checkAudioTag(bytes)
        var bodies: [ArraySlice<UInt8>] = [], at = 0
        while at < bytes.count {
            let end = Swift.min(bytes.count, at + 1 + Int(bytes[at]))
            bodies.append(bytes[(at + 1)..<end])
            at = end
        }
        // The file header and PreviousTagSize0, then tags framed here (the writer refuses bad bodies).
        var file = FLVWriter(header: FLVFileHeader(hasAudio: true, hasVideo: false)).bytes
        var headers = 0
        for (index, body) in bodies.enumerated() {
            checkAudioTag(Array(body))
            if let tag = try? FLVAudioTag(parsing: body), case .sequenceHeader = tag.packet { headers += 1 }
            var tag: [UInt8] = []
            do {
                try FLVTagHeader(tagType: .audio, dataSize: body.count, timestamp: UInt32(index * 20)).append(to: &tag)
            } catch {
                check(false, "a tag header for \(body.count) bytes: \(error)")
            }
            tag += body
            let size = tag.count
            tag += [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            file += tag
        }
        var reader: FLVReader
        do {
            reader = try FLVReader(file)
        } catch {
            check(false, "the written header is refused: \(error)")
            return
        }
        var frames = 0, skipped = 0
        do {
            while let event = try reader.next() {
                switch event {
                case .frame(let frame):
                    frames += 1
                    check(frame.audioFormat != nil && frame.audioFormat == reader.audioFormat, "an audio frame not in the format in force")
                    check(frame.byteOffset + frame.byteCount <= file.count, "a frame outside the file")
                    let data = Array(file[(frame.byteOffset + FLVTagHeader.size)..<(frame.byteOffset + frame.byteCount)])
                    check(!frame.data.isEmpty && data.count - frame.data.count <= 2 && data.hasSuffix(frame.data), "frame bytes not the tag's")
                    check(frame.isKeyframe && frame.compositionTime == 0 && frame.format == nil, "an audio frame with video properties")
                case .skippedTag(let error):
                    skipped += 1
                    check(error.field != nil && (error.byteOffset ?? -1) >= 0 && (error.byteOffset ?? -1) <= file.count, "skipped tag \(error)")
                default:
                    check(false, "\(event) from audio tags")
                }
            }
        } catch {
            check(false, "fatal error from audio tags: \(error)")
        }
        check(frames + skipped + headers == bodies.count, "\(bodies.count) tags gave \(frames) frames, \(skipped) skipped, \(headers) headers")
        check(reader.ignoredTagCount == 0, "audio tags ignored")
    }

    /// One body: parsed and written back the same, or refused with a field and an offset in it.
    private static func checkAudioTag(_ body: [UInt8]) {
        do {
            let tag = try FLVAudioTag(parsing: body)
            let written = try? tag.serialized()
            check(written == body, "an audio tag not written back the same")
            if case .sequenceHeader(let format) = tag.packet {
                check(format.codec == .aac && format.magicCookie == Array(body.dropFirst(2)), "a sequence header's configuration")
                check(format.sampleRate > 0 && format.channelCount > 0, "a format without rate or channels")
            }
        } catch {
            check(error.field != nil && (0...body.count).contains(error.byteOffset ?? -1), "audio tag error \(error)")
            check([.truncated, .unsupported, .valueOutOfRange].contains(error.code), "audio tag error code \(error)")
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func hasSuffix(_ suffix: [UInt8]) -> Bool { count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix) }
}
