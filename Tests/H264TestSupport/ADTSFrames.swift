/// The raw AAC frames of an ADTS stream (ISO/IEC 14496-3 1.A.2), as the peers write it
/// (`ffmpeg … -f adts`): each frame without its 7-byte header (9 with its CRC,
/// `protection_absent` 0); `frame_length` counts the header. The tests' one ADTS reader.
public enum ADTSFrames {
    /// A stream that is not ADTS where a header should start.
    public struct Malformed: Error, CustomStringConvertible {
        /// What was found, and where.
        public var description: String
    }

    /// The frames of `bytes`, in order.
    ///
    /// - Throws: ``Malformed`` at a missing sync word or a `frame_length` past the end.
    public static func frames(_ bytes: [UInt8]) throws -> [[UInt8]] {
        var frames: [[UInt8]] = [], at = 0
        while at < bytes.count {
            guard bytes.count - at >= 7, bytes[at] == 0xFF, bytes[at + 1] & 0xF6 == 0xF0 else {
                throw Malformed(description: "no ADTS sync word at byte \(at)")
            }
            let headerSize = bytes[at + 1] & 0x01 == 1 ? 7 : 9
            let length = Int(bytes[at + 3] & 0x03) << 11 | Int(bytes[at + 4]) << 3 | Int(bytes[at + 5]) >> 5
            guard length > headerSize, at + length <= bytes.count else {
                throw Malformed(description: "ADTS frame_length \(length) at byte \(at) of \(bytes.count)")
            }
            frames.append(Array(bytes[(at + headerSize)..<(at + length)]))
            at += length
        }
        return frames
    }
}
