public import H264

/// What an ``EncoderSession`` produces and how, after the properties of VideoToolbox's
/// `VTCompressionSession` (`kVTCompressionPropertyKey_*`).
///
/// Every property may be changed before the session is prepared; ``averageBitRate`` and
/// ``dataRateLimits`` may also change live (``EncoderSession/setAverageBitRate(_:)``,
/// ``EncoderSession/setDataRateLimits(_:)``; an H.265 session changes its bit rate with a new
/// libx265 encoder and an IRAP picture, since libx265 does not follow a live bit-rate change).
/// ``validate()`` names the first invalid property.
public struct EncoderConfiguration: Hashable, Sendable {
    /// H.264 profiles the encoder can produce (clause A.2).
    public enum Profile: String, Hashable, Sendable, CaseIterable {
        /// Constrained Baseline (A.2.1.1): no B slices, no CABAC, no 8×8 transform. x264
        /// signals `profile_idc` 66 with `constraint_set1_flag`.
        case baseline
        /// Main (A.2.2): B slices and CABAC, no 8×8 transform.
        case main
        /// High (A.2.4): Main plus the 8×8 transform and scaling matrices.
        case high

        /// The `profile_idc` this profile is signalled with (clause 7.4.2.1.1).
        public var profileIdc: UInt8 {
            switch self {
            case .baseline: 66
            case .main: 77
            case .high: 100
            }
        }
    }

    /// The level (Annex A, Table A-1): chosen by the encoder from size, rate and buffer, or fixed.
    public enum Level: Hashable, Sendable {
        /// The encoder picks the lowest level the stream fits (VideoToolbox's `…_AutoLevel`).
        case automatic
        /// A fixed `level_idc`: 10 × the level number, e.g. 31 for level 3.1 (9 for level 1b).
        case fixed(Int)

        /// The `level_idc` values of Table A-1.
        public static let validLevelIdcs: Set<Int> = [9, 10, 11, 12, 13, 20, 21, 22, 30, 31, 32, 40, 41, 42, 50, 51, 52, 60, 61, 62]
    }

    /// The entropy coder (clause 9.2 CAVLC, 9.3 CABAC); VideoToolbox's `H264EntropyMode`.
    public enum EntropyMode: String, Hashable, Sendable {
        /// Context-adaptive variable-length coding: all profiles, cheaper to decode.
        case cavlc
        /// Context-adaptive binary arithmetic coding: Main and High only, ~10% smaller.
        case cabac
    }

    /// A data-rate limit: at most `bytes` in any window of `seconds`
    /// (VideoToolbox's `DataRateLimits` pair). Mapped to x264's VBV.
    public struct DataRateLimit: Hashable, Sendable {
        /// The most bytes allowed in one window.
        public var bytes: Int
        /// The window length in seconds.
        public var seconds: Double
        /// Creates a limit of `bytes` per `seconds`.
        public init(bytes: Int, seconds: Double) {
            self.bytes = bytes
            self.seconds = seconds
        }
        /// The limit as a rate in bits per second.
        public var bitsPerSecond: Double { Double(bytes) * 8 / seconds }
    }

    /// The encoder's speed/quality presets, FFmpeg's `-preset` (``preset``): raw values are
    /// x264's names, which x265's presets share, so one value means the same for both codecs.
    public enum SpeedPreset: String, Hashable, Sendable, CaseIterable {
        case ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo
    }

    /// The encoder's content tunes, FFmpeg's `-tune` (``tune``): raw values are x264's names.
    /// x265 has `animation`, `grain`, `psnr`, `ssim`, `fastdecode` and `zerolatency` of them;
    /// `film` and `stillimage` with ``codec`` `.hevc` are a configuration error naming x265.
    public enum Tune: String, Hashable, Sendable, CaseIterable {
        case film, animation, grain, stillimage, psnr, ssim, fastdecode, zerolatency
    }

    /// The coding standard, VideoToolbox's `codecType` (`kCMVideoCodecType_H264`,
    /// `kCMVideoCodecType_HEVC`): `.h264` (default) with libx264, or
    /// `.hevc` with libx265 (the package trait `HEVCEncoding`, on by default). The
    /// other properties mean the same for both, except where a property says otherwise.
    public var codec: VideoCodec = .h264
    /// The H.265 profile (VideoToolbox's `kVTProfileLevel_HEVC_Main_AutoLevel` and
    /// `…_Main10_AutoLevel`); default ``HEVCProfile/main``. Used with ``codec`` `.hevc` only
    /// (``profile`` is H.264's).
    public var hevcProfile: HEVCProfile = .main
    /// Encode in real time (VideoToolbox's `RealTime`): when true, x264 runs with tune
    /// `zerolatency` — no lookahead, no B-frames, no frame-thread delay, sliced threads — so
    /// each frame's output is ready when its `encode` has been handled. Default false.
    public var realTime: Bool = false
    /// The profile (VideoToolbox's `ProfileLevel`); default ``Profile/high``.
    public var profile: Profile = .high
    /// The level; default ``Level/automatic``.
    public var level: Level = .automatic
    /// The entropy coder; `nil` (default) takes CABAC for Main and High, CAVLC for Baseline.
    /// CABAC with Baseline is an error.
    public var entropyMode: EntropyMode? = nil
    /// The long-term average bit rate in bits per second (VideoToolbox's `AverageBitRate`).
    /// `nil` (default) uses `RecommendedBitRate` for the frame size and
    /// ``expectedFrameRate``, unless ``constantRateFactor`` is set.
    public var averageBitRate: Int? = nil
    /// Constant quality instead of a bit rate: x264's CRF, 0 (lossless) … 51; about 23 is
    /// x264's default quality. Setting both this and ``averageBitRate`` is an error.
    public var constantRateFactor: Double? = nil
    /// Hard limits on the data rate (VideoToolbox's `DataRateLimits`): at most `bytes` in any
    /// window of `seconds`, for each limit.
    ///
    /// x264 has one VBV — a maximum rate R and a buffer B — and a stream that keeps to it carries
    /// at most B + R × T bits in any window of T seconds (a full buffer, then R for T seconds).
    /// So the limit kept as the rate is the one with the lowest rate (it bounds the long-term
    /// rate, which no buffer can): R is three quarters of it. The buffer is then the largest
    /// that keeps B + R × `seconds` within `bytes` for every limit, which leaves each a quarter
    /// of its bytes at least: every limit holds, to x264's VBV accuracy, not only the lowest.
    /// (Taking that limit's rate and its window's bytes as R and B, as a plain mapping would,
    /// lets a window carry up to twice its bytes.) Empty (default): with a bit rate,
    /// the session uses a VBV at the average rate with one second of buffer (x264 changes rates
    /// live only with a VBV, and follows a change promptly only when the VBV rate is close to the
    /// average); with ``constantRateFactor``, no VBV.
    public var dataRateLimits: [DataRateLimit] = []
    /// The most frames from one keyframe (IDR) to the next (VideoToolbox's
    /// `MaxKeyFrameInterval`); `nil` for x264's default of 250.
    public var maxKeyFrameInterval: Int? = nil
    /// The most seconds from one keyframe to the next (`MaxKeyFrameIntervalDuration`). With
    /// ``maxKeyFrameInterval`` also set, the smaller interval (in frames at
    /// ``expectedFrameRate``) wins.
    public var maxKeyFrameIntervalDuration: Double? = nil
    /// The frame rate the source is expected to have (`ExpectedFrameRate`); drives rate
    /// control, keyframe intervals in seconds and the default bit rate. Default 30.
    public var expectedFrameRate: Double = 30
    /// Allow B-frames, i.e. decode order differing from presentation order
    /// (`AllowFrameReordering`). Ignored (no B-frames) for Baseline and real time. Default true.
    public var allowFrameReordering: Bool = true
    /// x264 worker threads; `nil` or 0 (default) lets x264 choose from the CPU count.
    public var threads: Int? = nil
    /// For experts: the encoder's speed preset, the same name for x264 (H.264) and x265
    /// (H.265). `nil` (default): `medium`, or `veryfast` when ``realTime``.
    public var preset: SpeedPreset? = nil
    /// For experts: the encoder's content tune, mapped to x264's or x265's tune of the same
    /// name (x265 has no `film` or `stillimage`: ``validate()`` names it). `nil` (default):
    /// none, or `zerolatency` when ``realTime``.
    public var tune: Tune? = nil
    /// ``preset``'s name before 0.2.0.
    @available(*, deprecated, renamed: "preset")
    public var x264Preset: SpeedPreset? {
        get { preset }
        set { preset = newValue }
    }
    /// ``tune``'s name before 0.2.0.
    @available(*, deprecated, renamed: "tune")
    public var x264Tune: Tune? {
        get { tune }
        set { tune = newValue }
    }
    /// Bound every frame to one frame interval's share of the bit rate (VBV of one frame):
    /// VideoToolbox's low-latency rate control, for calls where a frame must be sendable before
    /// the next one is captured. Overrides ``dataRateLimits``. Default false.
    public var lowLatencyRateControl: Bool = false
    /// How many encoded frames ``EncoderSession/frames`` holds for a consumer that has not read
    /// them, and which it drops beyond that (each drop counted in
    /// ``EncoderSession/droppedFrameCount``); the output handler is not affected. Default
    /// `OutputBufferingPolicy.default` (the newest 30). Read when `frames` is first
    /// accessed.
    public var frameBuffering: OutputBufferingPolicy = .default

    /// The named configurations below, for code that picks one by name (a command-line option,
    /// a table of tests); raw values are the names of the static properties.
    public enum Preset: String, Hashable, Sendable, CaseIterable {
        /// ``EncoderConfiguration/liveCapture``.
        case liveCapture
        /// ``EncoderConfiguration/ultraLowLatency``.
        case ultraLowLatency
        /// ``EncoderConfiguration/activeTranscoding``.
        case activeTranscoding
        /// ``EncoderConfiguration/backgroundTranscoding``.
        case backgroundTranscoding

        /// The configuration the preset names.
        public var configuration: EncoderConfiguration {
            switch self {
            case .liveCapture: .liveCapture
            case .ultraLowLatency: .ultraLowLatency
            case .activeTranscoding: .activeTranscoding
            case .backgroundTranscoding: .backgroundTranscoding
            }
        }
    }

    /// The default configuration: High profile, automatic level, recommended bit rate,
    /// B-frames allowed, x264 preset `medium`, not real time.
    public init() {}

    /// For a camera or screen being captured and streamed: real time (tune `zerolatency`:
    /// no lookahead, no frame delay), no frame reordering (B-frames add a frame of latency and
    /// capture cannot wait), x264 `veryfast` so encoding keeps up, High profile, a keyframe at
    /// least every 2 seconds so a viewer who joins late waits at most 2 seconds.
    /// Apple recommends `RealTime` and no frame reordering for capture.
    public static var liveCapture: EncoderConfiguration {
        var c = EncoderConfiguration()
        c.realTime = true
        c.allowFrameReordering = false
        c.preset = .veryfast
        c.maxKeyFrameIntervalDuration = 2
        return c
    }

    /// For video calls and remote control, where every millisecond counts: everything of
    /// ``liveCapture`` plus `superfast` and low-latency rate control (each frame fits one frame
    /// interval's bytes), and a long keyframe interval (10 s) because receivers ask for a
    /// keyframe on loss (``EncoderSession/encode(_:presentationTimeStamp:duration:forceKeyframe:)``).
    /// No lookahead and no B-frames: frame N's output is out when `encode(N)` has been handled.
    public static var ultraLowLatency: EncoderConfiguration {
        var c = liveCapture
        c.preset = .superfast
        c.lowLatencyRateControl = true
        c.maxKeyFrameIntervalDuration = 10
        return c
    }

    /// For a transcode a user is waiting for: not real time (lookahead and B-frames improve
    /// quality per bit), x264 `faster` for speed, frame reordering on, keyframes at least every
    /// 4 seconds for seeking.
    public static var activeTranscoding: EncoderConfiguration {
        var c = EncoderConfiguration()
        c.preset = .faster
        c.maxKeyFrameIntervalDuration = 4
        return c
    }

    /// For a transcode nobody waits for (export queues, archives): x264 `slow` for the best
    /// quality per bit, frame reordering on, keyframes at least every 10 seconds, and at most
    /// 2 threads so the machine stays responsive.
    public static var backgroundTranscoding: EncoderConfiguration {
        var c = EncoderConfiguration()
        c.preset = .slow
        c.maxKeyFrameIntervalDuration = 10
        c.threads = 2
        return c
    }

    /// Checks every property; throws for the first invalid one, naming it in `field`.
    ///
    /// - Throws: `MediaError.Code.invalidConfiguration`.
    public func validate() throws(MediaError) {
        func fail(_ field: String, _ message: String) -> MediaError {
            MediaError(.invalidConfiguration, field: field, message)
        }
        try validateCodec()
        if codec == .h264, case .fixed(let idc) = level, !Level.validLevelIdcs.contains(idc) {
            throw fail("level", "level_idc \(idc) is not a level of Table A-1")
        }
        if codec == .h264, entropyMode == .cabac, profile == .baseline {
            throw fail("entropyMode", "CABAC is not allowed in the Baseline profile")
        }
        if let averageBitRate, !(1_000...1_000_000_000).contains(averageBitRate) {
            throw fail("averageBitRate", "\(averageBitRate) bit/s is outside 1000…1000000000")
        }
        if let constantRateFactor, !(constantRateFactor.isFinite && (0...51).contains(constantRateFactor)) {
            throw fail("constantRateFactor", "\(constantRateFactor) is outside 0…51")
        }
        if averageBitRate != nil, constantRateFactor != nil {
            throw fail("constantRateFactor", "set either averageBitRate or constantRateFactor, not both")
        }
        try Self.validate(dataRateLimits)
        if let maxKeyFrameInterval, !(1...100_000).contains(maxKeyFrameInterval) {
            throw fail("maxKeyFrameInterval", "\(maxKeyFrameInterval) frames is outside 1…100000")
        }
        if let d = maxKeyFrameIntervalDuration, !(d.isFinite && d > 0 && d <= 3600) {
            throw fail("maxKeyFrameIntervalDuration", "\(d) s is outside (0, 3600]")
        }
        guard expectedFrameRate.isFinite, expectedFrameRate >= 0.1, expectedFrameRate <= 1000 else {
            throw fail("expectedFrameRate", "\(expectedFrameRate) fps is outside 0.1…1000")
        }
        if let threads, !(0...128).contains(threads) {
            throw fail("threads", "\(threads) is outside 0…128")
        }
        if lowLatencyRateControl, constantRateFactor != nil {
            throw fail("lowLatencyRateControl", "low-latency rate control needs a bit rate, not constantRateFactor")
        }
        try frameBuffering.validate()
    }

    static func validate(_ limits: [DataRateLimit]) throws(MediaError) {
        for (i, limit) in limits.enumerated() {
            guard limit.bytes > 0, limit.bytes <= 1_000_000_000 else {
                throw MediaError(.invalidConfiguration, field: "dataRateLimits[\(i)].bytes", "\(limit.bytes) is outside 1…1000000000")
            }
            guard limit.seconds.isFinite, limit.seconds >= 0.001, limit.seconds <= 3600 else {
                throw MediaError(.invalidConfiguration, field: "dataRateLimits[\(i)].seconds", "\(limit.seconds) is outside 0.001…3600")
            }
        }
    }

    /// The VBV that keeps every ``dataRateLimits`` entry (see there); `nil` without limits.
    var dataRateLimitsVBV: (bitsPerSecond: Double, bufferBits: Double)? {
        guard let lowest = dataRateLimits.map(\.bitsPerSecond).min() else { return nil }
        let rate = lowest * 3 / 4
        let buffer = dataRateLimits.map { Double($0.bytes) * 8 - rate * $0.seconds }.min() ?? 0
        return (rate, buffer)
    }

    /// The keyframe interval in frames, the smaller of ``maxKeyFrameInterval`` and
    /// ``maxKeyFrameIntervalDuration`` × ``expectedFrameRate``; `nil` when neither is set.
    public var effectiveMaxKeyFrameInterval: Int? {
        let fromDuration = maxKeyFrameIntervalDuration.map { max(1, Int(($0 * expectedFrameRate).rounded())) }
        switch (maxKeyFrameInterval, fromDuration) {
        case let (a?, b?): return min(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return nil
        }
    }

    /// The bit rate the session will target for `width` × `height`: ``averageBitRate``, or the
    /// recommendation; `nil` in constant-quality mode.
    public func effectiveAverageBitRate(width: Int, height: Int) -> Int? {
        if constantRateFactor != nil { return nil }
        if let averageBitRate { return averageBitRate }
        return (try? RecommendedBitRate.bitsPerSecond(width: width, height: height, frameRate: expectedFrameRate)) ?? 1_500_000
    }
}

extension EncoderConfiguration {
    /// ``SpeedPreset``'s name before 0.2.0.
    @available(*, deprecated, renamed: "SpeedPreset")
    public typealias X264Preset = SpeedPreset
    /// ``Tune``'s name before 0.2.0.
    @available(*, deprecated, renamed: "Tune")
    public typealias X264Tune = Tune
}
