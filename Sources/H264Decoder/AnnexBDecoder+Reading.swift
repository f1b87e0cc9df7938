import H264

extension AnnexBDecoder {
    /// Decodes a whole Annex-B input read in chunks (as a network stream arrives) and finishes:
    /// at most `queueLimit` access units wait ahead of libavcodec, so a slow decoder slows the
    /// reading instead of queueing the whole input.
    ///
    /// - Parameters:
    ///   - chunkSize: the most one read asks for.
    ///   - queueLimit: how many access units may be queued before the next chunk is read.
    ///   - read: fills the buffer it is given and returns how many bytes it wrote, 0 at the end.
    ///   - afterChunk: runs after each chunk is decoded (check the output side's error, show
    ///     progress); what it throws ends the reading.
    /// - Throws: what `read` or `afterChunk` threw, or an `MediaError` for a stream whose
    ///   framing is lost (naming its byte offset) or a failing session.
    public mutating func decode(chunkSize: Int = 1 << 20, queueLimit: Int = 8,
                                reading read: (UnsafeMutableRawBufferPointer) throws -> Int,
                                afterChunk: () throws -> Void = {}) throws {
        var chunk = [UInt8](repeating: 0, count: max(1, chunkSize))
        while true {
            let count = try chunk.withUnsafeMutableBytes { try read($0) }
            if count == 0 { break }
            try session.waitForQueuedAccessUnits(downTo: queueLimit)
            try append(chunk[0..<count])
            try afterChunk()
        }
        try finish()
    }
}
