import H264
import MediaContainers
import MediaCore

/// `MP4Reader` on the input as a whole file in memory (progressive, `.mov` or fragmented).
extension FuzzTarget {
    static func mp4(_ bytes: [UInt8]) {
        guard var reader = try? MP4Reader(bytes) else { return }
        let samples = reader.tracks.reduce(0) { $0 + $1.samples.count }
        // Every sample lies inside the input: the tables were bounded by the bytes present.
        for track in reader.tracks {
            for sample in track.samples {
                check(sample.offset >= 0 && sample.size >= 0 && sample.offset + sample.size <= bytes.count,
                      "sample of \(sample.size) bytes at \(sample.offset) outside \(bytes.count) bytes")
            }
        }
        var frames = 0
        while true {
            let frame: MP4Frame?
            do throws(MediaError) {
                frame = try reader.next()
            } catch {
                fatalError("property violated: next() threw on memory input: \(error)")
            }
            guard let frame else { break }
            frames += 1
            check(frames <= samples, "more frames (\(frames)) than samples (\(samples))")
            check(frame.byteOffset + frame.byteCount <= bytes.count, "frame outside the input")
            if frame.frame.videoFormat != nil {
                // Video frames hold valid 4-byte AVCC.
                let units = try? AVCC.nalUnits(in: frame.data, lengthSize: 4)
                check(units.map { !$0.isEmpty } == true, "a video frame that is not 4-byte AVCC")
            }
        }
    }
}
