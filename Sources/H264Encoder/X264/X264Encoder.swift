// The one file that calls libx264 (and libyuv) through CX264. Nothing here is public.
import CX264
import H264
import HEVC
import Logging

/// Carries the session's logger to x264's log callback (called on x264's own threads too).
final class X264LogBox: Sendable {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }

    func log(level: Int32, message: String) {
        var text = message
        while text.last == "\n" { text.removeLast() }
        let swiftLevel: Logger.Level = switch level {
        case X264_LOG_ERROR: .error
        case X264_LOG_WARNING: .warning
        case X264_LOG_INFO: .info
        default: .debug
        }
        logger.log(level: swiftLevel, "\(text)", metadata: ["x264": "true"])
    }

    var x264Level: Int32 {
        switch logger.logLevel {
        case .trace, .debug: X264_LOG_DEBUG
        case .info, .notice: X264_LOG_INFO
        case .warning: X264_LOG_WARNING
        case .error, .critical: X264_LOG_ERROR
        }
    }
}

/// Owns what an x264 encoder holds outside Swift's memory: the log target x264 calls back
/// through, the logger box it points at and, once opened, the `x264_t` handle. Everything is
/// released in one place, `deinit` — whichever step of opening failed — the handle first
/// (x264 may log while it closes), then the log target.
final class X264Handle {
    /// What `param.p_log_private` points at; valid until `deinit`.
    let logTarget: UnsafeMutablePointer<cx264_log_target>
    private let logBox: Unmanaged<X264LogBox>
    /// The open encoder, `nil` before ``open(_:)`` succeeds and after ``close()``.
    private(set) var encoder: OpaquePointer?

    init(logger: Logger) {
        let box = Unmanaged.passRetained(X264LogBox(logger: logger))
        logBox = box
        logTarget = .allocate(capacity: 1)
        logTarget.initialize(to: cx264_log_target(
            sink: { context, level, message in
                guard let context, let message else { return }
                Unmanaged<X264LogBox>.fromOpaque(context).takeUnretainedValue()
                    .log(level: level, message: String(cString: message))
            },
            context: box.toOpaque()))
    }

    /// x264's log level for the logger's level.
    var logLevel: Int32 { logBox.takeUnretainedValue().x264Level }

    /// Opens an encoder with `param`; `false` when x264 cannot.
    /// The corresponding x264 call is `x264_encoder_open`.
    func open(_ param: inout x264_param_t) -> Bool {
        encoder = cx264_encoder_open(&param)
        return encoder != nil
    }

    /// Closes the encoder once. The corresponding x264 call is `x264_encoder_close`.
    func close() {
        if let h = encoder {
            encoder = nil
            x264_encoder_close(h)
        }
    }

    deinit {
        close()
        logTarget.deallocate()
        logBox.release()
    }
}

/// One open libx264 encoder (`x264_t`) for one frame size.
///
/// Not thread-safe, like x264 itself: the session serialises every use (its lane's mutex).
final class X264Encoder: CodecEncoder {
    let width: Int
    let height: Int
    let formatDescription: FormatDescription
    var format: VideoFormatDescription { .h264(formatDescription) }

    private let x264: X264Handle
    private var handle: OpaquePointer? { x264.encoder }
    /// The caller's time stamps by the frame index given to x264 as `i_pts` (x264's time base
    /// is 1/fps and b_vfr_input is off, as in the x264 CLI).
    private var timing: FrameTiming
    /// I420 scratch planes for BGRA input, reused frame to frame.
    private var scratch: [UInt8] = []

    /// Builds x264 parameters from `configuration`, opens the encoder and reads SPS and PPS.
    ///
    /// The corresponding x264 calls are `x264_param_default_preset`, `x264_param_apply_profile`,
    /// `x264_encoder_open` and `x264_encoder_headers`.
    init(width: Int, height: Int, configuration c: EncoderConfiguration, logger: Logger) throws(MediaError) {
        self.width = width
        self.height = height
        // Released by its deinit if any step below throws.
        let x264 = X264Handle(logger: logger)
        self.x264 = x264
        let rate = FrameRate(approximating: c.expectedFrameRate)
        let fps = (num: UInt32(rate.numerator), den: UInt32(rate.denominator))
        timing = FrameTiming(rate: rate)

        var param = x264_param_t()
        let preset = (c.preset ?? (c.realTime ? .veryfast : .medium)).rawValue
        let tune = c.tune?.rawValue ?? (c.realTime ? "zerolatency" : nil)
        guard x264_param_default_preset(&param, preset, tune) == 0 else {
            throw MediaError(.invalidConfiguration, field: "tune", "x264 rejected preset \(preset) with tune \(tune ?? "none")")
        }
        cx264_param_set_log(&param, x264.logTarget, x264.logLevel)
        param.i_width = Int32(width)
        param.i_height = Int32(height)
        param.i_csp = X264_CSP_I420
        param.i_fps_num = fps.num
        param.i_fps_den = fps.den
        param.i_timebase_num = fps.den
        param.i_timebase_den = fps.num
        param.b_vfr_input = 0
        param.b_annexb = 0
        param.b_repeat_headers = 0
        param.b_aud = 0
        if let threads = c.threads { param.i_threads = Int32(threads) }
        if case .fixed(let idc) = c.level { param.i_level_idc = Int32(idc) }
        if let keyint = c.effectiveMaxKeyFrameInterval {
            param.i_keyint_max = Int32(keyint)
            param.i_keyint_min = min(param.i_keyint_min, Int32(keyint))
        }
        if !c.allowFrameReordering { param.i_bframe = 0 }
        if let mode = c.entropyMode { param.b_cabac = mode == .cabac ? 1 : 0 }
        if let crf = c.constantRateFactor {
            param.rc.i_rc_method = X264_RC_CRF
            param.rc.f_rf_constant = Float(crf)
        } else {
            let bitRate = c.effectiveAverageBitRate(width: width, height: height) ?? 1_500_000
            param.rc.i_rc_method = X264_RC_ABR
            param.rc.i_bitrate = Int32(max(1, bitRate / 1000))
        }
        Self.applyVBV(&param, c, width: width, height: height)
        guard x264_param_apply_profile(&param, c.profile.rawValue) == 0 else {
            throw MediaError(.invalidConfiguration, field: "profile", "x264 cannot apply profile \(c.profile.rawValue) to this configuration")
        }
        guard x264.open(&param), let h = x264.encoder else {
            throw MediaError(.encoderFailed, field: "x264_encoder_open", "x264 could not open an encoder for \(width)×\(height) (see the log)")
        }

        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        var sps: [[UInt8]] = [], pps: [[UInt8]] = []
        if x264_encoder_headers(h, &nals, &count) >= 0, let nals {
            for i in 0..<Int(count) {
                let nal = nals[i]
                guard let payload = nal.p_payload, nal.i_payload > 4 else { continue }
                let bytes = [UInt8](UnsafeBufferPointer(start: payload + 4, count: Int(nal.i_payload) - 4))
                if nal.i_type == Int32(NAL_SPS.rawValue) { sps.append(bytes) }
                if nal.i_type == Int32(NAL_PPS.rawValue) { pps.append(bytes) }
            }
        }
        do {
            formatDescription = try FormatDescription(sequenceParameterSets: sps, pictureParameterSets: pps, nalUnitLengthSize: 4)
        } catch {
            throw MediaError(.encoderFailed, field: "x264_encoder_headers", "x264 gave no usable SPS/PPS: \(error)")
        }
    }

    /// The VBV of ``EncoderConfiguration/vbv(width:height:)``, when there is one.
    private static func applyVBV(_ param: inout x264_param_t, _ c: EncoderConfiguration, width: Int, height: Int) {
        guard let vbv = c.vbv(width: width, height: height) else { return }
        param.rc.i_vbv_max_bitrate = vbv.maxBitRate
        param.rc.i_vbv_buffer_size = vbv.bufferSize
    }

    /// Changes the average bit rate and VBV live, without a new IDR.
    ///
    /// The corresponding x264 call is `x264_encoder_reconfig`.
    func reconfigure(_ c: EncoderConfiguration) throws(MediaError) {
        guard let h = handle else { return }
        var param = x264_param_t()
        x264_encoder_parameters(h, &param)
        if let bitRate = c.effectiveAverageBitRate(width: width, height: height) {
            param.rc.i_bitrate = Int32(max(1, bitRate / 1000))
        }
        Self.applyVBV(&param, c, width: width, height: height)
        guard x264_encoder_reconfig(h, &param) >= 0 else {
            throw MediaError(.encoderFailed, field: "x264_encoder_reconfig", "x264 refused the new rate settings")
        }
    }

    /// Encodes one frame; returns what x264 outputs now (zero or one access unit).
    ///
    /// The corresponding x264 call is `x264_encoder_encode`.
    func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration, forceKeyframe: Bool) throws(MediaError) -> EncodedFrame? {
        guard let h = handle else { throw MediaError(.invalidState, "the x264 encoder is closed") }
        let index = timing.add(presentationTimeStamp: presentationTimeStamp, duration: duration)
        var pic = x264_picture_t()
        x264_picture_init(&pic)
        pic.i_pts = index
        if forceKeyframe { pic.i_type = cx264_type_idr() }
        let result: Result<EncodedFrame?, MediaError>
        switch frame.pixelFormat {
        case .nv12:
            result = Self.withPlaneBases(frame.planes) { base0, base1, _ in
                pic.img.i_csp = X264_CSP_NV12
                pic.img.i_plane = 2
                pic.img.plane.0 = UnsafeMutablePointer(mutating: base0)
                pic.img.plane.1 = UnsafeMutablePointer(mutating: base1)
                pic.img.i_stride.0 = Int32(frame.planes[0].bytesPerRow)
                pic.img.i_stride.1 = Int32(frame.planes[1].bytesPerRow)
                return Result { () throws(MediaError) in try self.encodePicture(h, &pic) }
            }
        case .i420, .bgra:
            result = try frame.withPlanarPlanes(scratch: &scratch) { planes in
                pic.img.i_csp = X264_CSP_I420
                pic.img.i_plane = 3
                pic.img.plane.0 = UnsafeMutablePointer(mutating: planes.y)
                pic.img.plane.1 = UnsafeMutablePointer(mutating: planes.u)
                pic.img.plane.2 = UnsafeMutablePointer(mutating: planes.v)
                pic.img.i_stride.0 = Int32(planes.yStride)
                pic.img.i_stride.1 = Int32(planes.uStride)
                pic.img.i_stride.2 = Int32(planes.vStride)
                return Result { () throws(MediaError) in try self.encodePicture(h, &pic) }
            }
        case .yuv420p10:
            throw MediaError(.invalidFrame, field: "pixelFormat", "the H.264 encoder takes 8-bit frames: encode 10-bit 4:2:0 with codec .hevc")
        }
        return try result.get()
    }

    /// Hands x264 the base address of each plane of a 2- or 3-plane frame (pointers valid
    /// only inside `body`), without building an array of them: no allocation per frame.
    private static func withPlaneBases<R>(_ planes: [VideoFrame.Plane],
                                          _ body: (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>?) -> R) -> R {
        planes[0].storage.withUnsafeBufferPointer { p0 in
            planes[1].storage.withUnsafeBufferPointer { p1 in
                let base0 = p0.baseAddress! + planes[0].offset
                let base1 = p1.baseAddress! + planes[1].offset
                guard planes.count > 2 else { return body(base0, base1, nil) }
                return planes[2].storage.withUnsafeBufferPointer { p2 in body(base0, base1, p2.baseAddress! + planes[2].offset) }
            }
        }
    }

    /// Drains every delayed frame (lookahead, B-frames, frame threads), then closes the
    /// encoder: x264 cannot take new frames after a flush.
    func flushAndClose() throws(MediaError) -> [EncodedFrame] {
        guard let h = handle else { return [] }
        var out: [EncodedFrame] = []
        defer { close() }
        while x264_encoder_delayed_frames(h) > 0 {
            let nalsResult = try encodeRaw(h, nil)
            if let frame = nalsResult { out.append(frame) }
        }
        return out
    }

    private func encodePicture(_ h: OpaquePointer, _ pic: inout x264_picture_t) throws(MediaError) -> EncodedFrame? {
        try withUnsafeMutablePointer(to: &pic) { (p) throws(MediaError) in try encodeRaw(h, p) }
    }

    private func encodeRaw(_ h: OpaquePointer, _ input: UnsafeMutablePointer<x264_picture_t>?) throws(MediaError) -> EncodedFrame? {
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        var out = x264_picture_t()
        let size = x264_encoder_encode(h, &nals, &count, input, &out)
        guard size >= 0 else { throw MediaError(.encoderFailed, field: "x264_encoder_encode", "x264 failed to encode (status \(size))") }
        guard size > 0, let nals, count > 0, let payload = nals[0].p_payload else { return nil }
        // x264 writes the payloads of one call back to back: one copy, one allocation per frame.
        let data = [UInt8](UnsafeBufferPointer(start: payload, count: Int(size)))
        let frameType: EncodedFrame.FrameType = switch out.i_type {
        case X264_TYPE_IDR: .idr
        case X264_TYPE_I: .i
        case X264_TYPE_BREF: .bReference
        case X264_TYPE_B: .b
        default: .p
        }
        let (pts, dts, duration) = timing.output(pts: out.i_pts, dts: out.i_dts)
        return EncodedFrame(data: data, presentationTimeStamp: pts, decodeTimeStamp: dts, duration: duration,
                            frameType: frameType, formatDescription: formatDescription, width: width, height: height)
    }

    /// Closes the encoder once. The corresponding x264 call is `x264_encoder_close`.
    func close() {
        x264.close()
    }
}
