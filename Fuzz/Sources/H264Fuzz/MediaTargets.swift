import H264
import HEVC
import MediaContainers

/// The y4m and FLV readers (H264Media, H264).
extension FuzzTarget {
    static func y4m(_ bytes: [UInt8]) {
        let whole = readY4M(bytes, chunk: .max)
        if case .success(let frames) = whole {
            // Every frame is the header's size.
            check(frames.allSatisfy { $0.count == frames.first?.count }, "frames of different sizes")
        }
        // The same frames or the same error, whatever sizes the reads come in.
        let chunked = readY4M(bytes, chunk: bytes.count % 13 + 1)
        check(chunked == whole, "reads of \(bytes.count % 13 + 1) bytes gave \(chunked), whole reads \(whole)")
    }

    /// Up to 16 frames of a y4m stream pushed in chunks of `chunk` bytes, or how it was rejected.
    private static func readY4M(_ bytes: [UInt8], chunk: Int) -> Result<[[UInt8]], MediaError> {
        var reader = Y4MStreamReader()
        var frames: [[UInt8]] = []
        do throws(MediaError) {
            var start = 0
            repeat {
                let end = min(bytes.count, start + min(chunk, bytes.count - start))
                reader.append(bytes[start..<end])
                start = end
                if start == bytes.count { reader.finish() }
                while frames.count < 16, let frame = try reader.nextFrame() {
                    if let header = reader.header {
                        check(header.width > 0 && header.height > 0 && header.width % 2 == 0 && header.height % 2 == 0,
                              "header \(header.width)x\(header.height) accepted")
                        check(frame.count == header.frameBytes, "a frame of \(frame.count) bytes, expected \(header.frameBytes)")
                    }
                    frames.append(frame)
                }
            } while start < bytes.count && frames.count < 16
            return .success(frames)
        } catch {
            // A typed, described rejection: fine.
            return .failure(error)
        }
    }

    static func flv(_ bytes: [UInt8]) {
        for input in [bytes, [0x46, 0x4C, 0x56, 1, 1, 0, 0, 0, 9, 0, 0, 0, 0] + bytes] {
            // The same input streamed in chunks: the same events and the same fatal error.
            var streamed: [FLVReader.Event] = []
            var streamError: MediaError?
            var stream = FLVReader()
            let chunk = input.count % 13 + 1
            do {
                var start = 0
                while start < input.count {
                    stream.append(input[start..<Swift.min(start + chunk, input.count)])
                    start += chunk
                    while let event = try stream.next() { streamed.append(event) }
                }
                stream.finish()
                while let event = try stream.next() { streamed.append(event) }
            } catch {
                streamError = error
            }
            var whole: [FLVReader.Event] = []
            guard var reader = try? FLVReader(input) else {
                check(streamError != nil && streamed.isEmpty, "the stream accepted a header the file reader refused")
                continue
            }
            var frames: [FLVVideoFrame] = []
            var wholeError: MediaError?
            do {
                while let event = try reader.next() {
                    whole.append(event)
                    switch event {
                    case .frame(let frame):
                        check(frame.byteOffset >= 9 && frame.byteOffset + frame.byteCount <= input.count, "frame outside the input")
                        check(frame.format == reader.format, "a frame not in the format in force")
                        check(frame.isKeyframe == frame.frameType.isKeyframe, "a keyframe flag other than the tag's")
                        let units = try? AVCC.nalUnits(in: frame.data, lengthSize: 4)
                        check(units?.isEmpty == false, "frame data is not 4-byte AVCC")
                        let types = frame.h264AccessUnit?.nalUnitTypes.count ?? frame.hevcAccessUnit?.nalUnitTypes.count
                        check(units?.count == types, "NAL unit types not one per NAL unit")
                        frames.append(frame)
                    case .skippedTag(let error), .warning(let error):
                        check((error.byteOffset ?? -1) >= 0 && (error.byteOffset ?? -1) <= input.count, "offset of \(error)")
                    case .formatChanged(let format):
                        check(format == reader.format, "a format change that is not the format in force")
                        if format.codec == .hevc {
                            let record = format.configurationRecordBytes
                            check(record.count >= FLVVideoTag.hevcConfigurationFixedSize && record[0] == 1, "an hvcC whose fixed part does not hold")
                        }
                    case .endOfSequence:
                        break
                    }
                }
            } catch {
                check(error.code == .flvFramingLost, "unexpected fatal error \(error)")
                wholeError = error
            }
            check(streamed == whole && streamError == wholeError, "streaming in chunks of \(chunk) gave other events")
            check((try? reader.next()) == .some(nil), "events after the end")
            var writer = FLVWriter()
            var format: VideoFormatDescription?
            do {
                for frame in frames {
                    // FLVVideoFrame.format is optional since c698e54; a frame the reader gives has one.
                    guard let frameFormat = frame.format else { check(false, "a read frame without a format"); continue }
                    if frameFormat != format {
                        // The frames are 4-byte AVCC now: the same format with 4-byte lengths.
                        let rewritten: VideoFormatDescription
                        if var record = frameFormat.h264?.configurationRecord {
                            record.lengthSizeMinusOne = 3
                            rewritten = .h264(FormatDescription(configurationRecord: record))
                        } else if var record = frameFormat.hevc {
                            record.lengthSizeMinusOne = 3
                            rewritten = .hevc(record)
                        } else {
                            rewritten = frameFormat
                        }
                        try writer.appendSequenceHeader(rewritten, timestamp: frame.decodeTime)
                        format = frameFormat
                    }
                    try writer.append(FLVVideoTag(frameType: frame.frameType, packet: .codedFrames(data: frame.data,
                        compositionTime: frame.compositionTime), syntax: frame.syntax, codec: frameFormat.codec), timestamp: frame.decodeTime)
                }
                let again = try FLVReader.read(writer.bytes).frames
                check(again.map(\.data) == frames.map(\.data), "rewritten frames differ")
                check(again.map(\.presentationTime) == frames.map(\.presentationTime), "rewritten times differ")
            } catch {
                check(false, "writing what was read failed: \(error)")
            }
        }
    }
}
