import H264
import H264Decoder

extension FuzzTarget {
    /// The first 8 bytes seed the chunk sizes; the rest goes through `AnnexBDecoder` into a
    /// one-thread `DecoderSession`. Nothing may crash, hang or read out of bounds (ASan watches
    /// the Swift side and the planes read here); every output frame's planes hold its size.
    static func decoder(_ bytes: [UInt8]) {
        var generator: UInt64 = 0x9E37_79B9
        for byte in bytes.prefix(8) { generator = generator << 8 | UInt64(byte) }
        let stream = Array(bytes.dropFirst(8))
        do {
            let session = try DecoderSession(configuration: DecoderConfiguration(threads: .count(1))) { frame in
                var total = 0
                for index in 0..<frame.planeCount {
                    _ = frame.withPlane(index) { buffer, plane in
                        check(plane.rowByteCount <= plane.bytesPerRow, "row longer than its stride")
                        total += plane.rowByteCount * plane.height
                        // Touch the first and last byte of the plane: in bounds of libavcodec's buffer.
                        return buffer.isEmpty ? 0 : Int(buffer[0]) + Int(buffer[buffer.count - 1])
                    }
                }
                check(total == frame.packedByteCount, "planes hold \(total) bytes, packed \(frame.packedByteCount)")
            }
            var decoder = AnnexBDecoder(session: session)
            var position = 0
            while position < stream.count {
                generator ^= generator << 13; generator ^= generator >> 7; generator ^= generator << 17
                let end = min(stream.count, position + Int((generator >> 8) % 2048) + 1)
                try decoder.append(stream[position..<end])
                position = end
            }
            try decoder.finish()
            session.invalidate()
        } catch {
            // Errors are fine (damaged input); crashes are not.
        }
    }
}
