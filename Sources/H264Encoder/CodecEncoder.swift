import H264
import HEVC
import Logging

/// One open encoder library handle for one frame size — libx264 (`X264Encoder`) or libx265
/// (`X265Encoder`, with the package trait `HEVCEncoding`) — as the session's `Lane` drives it.
///
/// Not thread-safe, like the libraries: the lane's lock serialises every use.
protocol CodecEncoder: AnyObject {
    /// The parameter sets the encoder's frames are coded with (read at opening).
    var format: VideoFormatDescription { get }
    /// Encodes one frame; returns what the library outputs now (zero or one access unit).
    func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration,
                forceKeyframe: Bool) throws(MediaError) -> EncodedFrame?
    /// Changes the average bit rate and VBV live, without a new keyframe.
    func reconfigure(_ c: EncoderConfiguration) throws(MediaError)
    /// Drains every delayed frame, then closes the encoder (no frame may follow).
    func flushAndClose() throws(MediaError) -> [EncodedFrame]
    /// Closes the encoder once (idempotent).
    func close()
}

/// Opens the encoder of `configuration.codec` for frames of `width` × `height`.
///
/// - Throws: `MediaError.Code.unsupported` for H.265 in a build without the trait
///   `HEVCEncoding`; what the encoder's initializer throws.
func openCodecEncoder(width: Int, height: Int, configuration: EncoderConfiguration,
                      logger: Logger) throws(MediaError) -> any CodecEncoder {
    switch configuration.codec {
    case .h264:
        return try X264Encoder(width: width, height: height, configuration: configuration, logger: logger)
    case .hevc:
        #if HEVCEncoding
        return try X265Encoder(width: width, height: height, configuration: configuration, logger: logger)
        #else
        throw EncoderConfiguration.hevcEncodingNotBuilt
        #endif
    }
}

/// The caller's time stamps by the frame index an encoder library is given as its `pts`
/// (x264 and x265 count in 1/fps with variable-frame-rate input off, as their command-line
/// tools do), and the decode time stamps of the outputs.
struct FrameTiming {
    private var byIndex: [Int64: (pts: Duration, duration: Duration)] = [:]
    private var nextIndex: Int64 = 0
    private var firstPTS: Duration?
    /// One frame interval at the expected frame rate.
    let nominalFrameDuration: Duration

    init(rate: FrameRate) {
        nominalFrameDuration = .seconds(Double(rate.denominator) / Double(rate.numerator))
    }

    /// Records a frame's time stamps; returns the index to give the library.
    mutating func add(presentationTimeStamp: Duration, duration: Duration) -> Int64 {
        let index = nextIndex
        nextIndex += 1
        byIndex[index] = (presentationTimeStamp, duration)
        if firstPTS == nil { firstPTS = presentationTimeStamp }
        return index
    }

    /// The presentation and decode time stamps and the duration of an output whose library
    /// `pts` and `dts` are given; forgets indices that can no longer be asked for.
    mutating func output(pts: Int64, dts: Int64) -> (pts: Duration, dts: Duration, duration: Duration) {
        let (presentation, duration) = byIndex[pts] ?? (time(at: pts), nominalFrameDuration)
        let decode = time(at: dts)
        // Indices below the decode time stamp are never asked for again.
        if byIndex.count > 64 { for key in byIndex.keys where key < dts - 1 { byIndex[key] = nil } }
        return (presentation, decode, duration)
    }

    /// The caller's time stamp of frame `index`; before the first frame (negative decode time
    /// stamps with B-frames), extrapolated back by the nominal frame duration.
    private func time(at index: Int64) -> Duration {
        if let t = byIndex[index] { return t.pts }
        let first = byIndex[0]?.pts ?? firstPTS ?? .zero
        return first + nominalFrameDuration * Int(index)
    }
}

extension EncoderConfiguration {
    /// The VBV both libraries take, in kbit/s and kbit: from data-rate limits, low-latency rate
    /// control or (with a bit rate) a default loose enough not to matter but present so the rate
    /// can change live; `nil` for none (constant quality without limits).
    func vbv(width: Int, height: Int) -> (maxBitRate: Int32, bufferSize: Int32)? {
        func kbit(_ bits: Double) -> Int32 { Int32(max(1, bits / 1000)) }
        guard let bitRate = effectiveAverageBitRate(width: width, height: height) else {
            return dataRateLimitsVBV.map { (kbit($0.bitsPerSecond), kbit($0.bufferBits)) }
        }
        let bits = Double(bitRate)
        if lowLatencyRateControl { return (kbit(bits), kbit(bits / expectedFrameRate)) }
        if let limits = dataRateLimitsVBV { return (kbit(limits.bitsPerSecond), kbit(limits.bufferBits)) }
        // A maximum rate at the average makes the libraries' ABR forget old rates within seconds
        // (x264's complexity sums decay when the VBV rate is under 1.5 × the bit rate), so a
        // live change is followed promptly; one second of buffer absorbs keyframes.
        return (kbit(bits), kbit(bits))
    }
}
