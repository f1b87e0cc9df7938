#if HEVCEncoding
// The one file that calls libx265 through CX265 (only with the package trait HEVCEncoding).
// Nothing here is public.
import CX265
import H264
import HEVC
import Logging

/// Owns what an x265 encoder holds outside Swift's memory: the API table of the build for the
/// profile's bit depth, the parameters and, once opened, the `x265_encoder` handle. Everything
/// is released in one place, `deinit`, whichever step of opening failed.
final class X265Handle {
    /// The API of the 8-bit or 10-bit build of libx265 (`x265_api_get`); every call goes
    /// through it.
    let api: x265_api
    /// The parameters the encoder is opened with (`x265_param_alloc`).
    let param: UnsafeMutablePointer<x265_param>
    /// The open encoder, `nil` before ``open()`` succeeds and after ``close()``.
    private(set) var encoder: OpaquePointer?

    /// The API of the build for `bitDepth` and fresh parameters; `nil` when the installed
    /// libx265 has no such build or cannot allocate.
    init?(bitDepth: Int) {
        guard let table = cx265_api_get(Int32(bitDepth)), let alloc = table.pointee.param_alloc,
              let param = alloc() else { return nil }
        api = table.pointee
        self.param = param
    }

    /// Opens an encoder with ``param``; `false` when x265 cannot.
    /// The corresponding x265 call is `x265_encoder_open`.
    func open() -> Bool {
        encoder = api.encoder_open?(param)
        return encoder != nil
    }

    /// Closes the encoder once. The corresponding x265 call is `x265_encoder_close`.
    func close() {
        if let h = encoder {
            encoder = nil
            api.encoder_close?(h)
        }
    }

    deinit {
        close()
        api.param_free?(param)
    }
}

/// One open libx265 encoder (`x265_encoder`) for one frame size, the H.265 twin of
/// `X264Encoder` behind the same `Lane`.
///
/// x265 writes 4-byte big-endian lengths before its NAL units (`bAnnexB` 0) like VideoToolbox,
/// VPS, SPS and PPS only through `x265_encoder_headers` (`bRepeatHeaders` 0). Not thread-safe,
/// like x265 itself: the session serialises every use (its lane's mutex). x265 3.5 has no log
/// callback and prints its lines to standard error itself: it is silent at the logger's default
/// level `warning` (failures are thrown), prints its errors and warnings at `notice`, more below.
final class X265Encoder: CodecEncoder {
    let width: Int
    let height: Int
    let format: VideoFormatDescription

    private let x265: X265Handle
    private var handle: OpaquePointer? { x265.encoder }
    private var timing: FrameTiming
    /// I420 scratch planes for NV12 and BGRA input, reused frame to frame.
    private var scratch: [UInt8] = []

    /// Builds x265 parameters from `configuration`, opens the encoder and reads VPS, SPS and PPS.
    ///
    /// The corresponding x265 calls are `x265_api_get`, `x265_param_default_preset`,
    /// `x265_param_apply_profile`, `x265_encoder_open` and `x265_encoder_headers`.
    init(width: Int, height: Int, configuration c: EncoderConfiguration, logger: Logger) throws(MediaError) {
        self.width = width
        self.height = height
        guard let x265 = X265Handle(bitDepth: c.hevcProfile.bitDepth) else {
            throw MediaError(.unsupported, field: "hevcProfile", "the installed libx265 has no \(c.hevcProfile.bitDepth)-bit build")
        }
        self.x265 = x265
        let rate = FrameRate(approximating: c.expectedFrameRate)
        timing = FrameTiming(rate: rate)
        let api = x265.api, p = x265.param

        let preset = (c.preset ?? (c.realTime ? .veryfast : .medium)).rawValue
        let tune = c.tune?.rawValue ?? (c.realTime ? "zerolatency" : nil)
        guard api.param_default_preset?(p, preset, tune) == 0 else {
            throw MediaError(.invalidConfiguration, field: "tune", "x265 rejected preset \(preset) with tune \(tune ?? "none")")
        }
        // x265 prints its lines itself (no log callback in 3.5), which a library must not do
        // unasked: silent at the default `warning` (its failures come back as errors), its
        // errors and warnings at `notice`, more below.
        p.pointee.logLevel = switch logger.logLevel {
        case .trace, .debug: X265_LOG_DEBUG
        case .info: X265_LOG_INFO
        case .notice: X265_LOG_WARNING
        case .warning, .error, .critical: X265_LOG_NONE
        }
        p.pointee.sourceWidth = Int32(width)
        p.pointee.sourceHeight = Int32(height)
        p.pointee.internalCsp = cx265_csp_i420()
        p.pointee.fpsNum = UInt32(rate.numerator)
        p.pointee.fpsDenom = UInt32(rate.denominator)
        p.pointee.bAnnexB = 0
        p.pointee.bRepeatHeaders = 0
        p.pointee.bEnableAccessUnitDelimiters = 0
        // The version SEI would join the parameter sets in the hvcC: keep the format to VPS, SPS, PPS.
        p.pointee.bEmitInfoSEI = 0
        if let threads = c.threads, threads > 0 { _ = api.param_parse?(p, "pools", "\(threads)") }
        if case .fixed(let level) = c.level { p.pointee.levelIdc = Int32(level) }
        if let keyint = c.effectiveMaxKeyFrameInterval {
            p.pointee.keyframeMax = Int32(keyint)
            p.pointee.keyframeMin = min(p.pointee.keyframeMin, Int32(keyint))
        }
        if !c.allowFrameReordering { p.pointee.bframes = 0 }
        if let crf = c.constantRateFactor {
            p.pointee.rc.rateControlMode = cx265_rc_crf()
            p.pointee.rc.rfConstant = crf
        } else {
            let bitRate = c.effectiveAverageBitRate(width: width, height: height) ?? 1_500_000
            p.pointee.rc.rateControlMode = cx265_rc_abr()
            p.pointee.rc.bitrate = Int32(max(1, bitRate / 1000))
        }
        Self.applyVBV(p, c, width: width, height: height)
        guard api.param_apply_profile?(p, c.hevcProfile.rawValue) == 0 else {
            throw MediaError(.invalidConfiguration, field: "hevcProfile", "x265 cannot apply profile \(c.hevcProfile.rawValue) to this configuration")
        }
        guard x265.open(), let h = x265.encoder else {
            throw MediaError(.encoderFailed, field: "x265_encoder_open", "x265 could not open an encoder for \(width)×\(height) (with a logger at level notice, x265 says why on standard error)")
        }

        var nals: UnsafeMutablePointer<x265_nal>?
        var count: UInt32 = 0
        var parameterSets: [[UInt8]] = []
        if let headers = api.encoder_headers, headers(h, &nals, &count) >= 0, let nals {
            for i in 0..<Int(count) {
                let nal = nals[i]
                guard let payload = nal.payload, nal.sizeBytes > 4 else { continue }
                parameterSets.append([UInt8](UnsafeBufferPointer(start: payload + 4, count: Int(nal.sizeBytes) - 4)))
            }
        }
        do {
            format = .hevc(try HEVCDecoderConfigurationRecord(parameterSets: parameterSets, lengthSize: 4))
        } catch {
            throw MediaError(.encoderFailed, field: "x265_encoder_headers", "x265 gave no usable VPS/SPS/PPS: \(error)")
        }
    }

    /// The VBV of ``EncoderConfiguration/vbv(width:height:)``, when there is one.
    private static func applyVBV(_ p: UnsafeMutablePointer<x265_param>, _ c: EncoderConfiguration, width: Int, height: Int) {
        guard let vbv = c.vbv(width: width, height: height) else { return }
        p.pointee.rc.vbvMaxBitrate = vbv.maxBitRate
        p.pointee.rc.vbvBufferSize = vbv.bufferSize
    }

    /// Changes the VBV live, without a new keyframe (the average bit rate goes along unchanged:
    /// ``EncoderSession/setAverageBitRate(_:)`` refuses a live change of it for H.265, which
    /// libx265 3.5 takes but does not follow). x265 refuses (with
    /// a warning only) a change that would move the stream to another level, which it derives
    /// from the VBV rate: the rate is kept within the band of the level the stream opened with.
    ///
    /// The corresponding x265 calls are `x265_encoder_parameters` and `x265_encoder_reconfig`.
    func reconfigure(_ c: EncoderConfiguration) throws(MediaError) {
        guard let h = handle, let alloc = x265.api.param_alloc, let p = alloc() else { return }
        defer { x265.api.param_free?(p) }
        x265.api.encoder_parameters?(h, p)
        if let bitRate = c.effectiveAverageBitRate(width: width, height: height) {
            p.pointee.rc.bitrate = Int32(max(1, bitRate / 1000))
        }
        Self.applyVBV(p, c, width: width, height: height)
        if p.pointee.rc.vbvMaxBitrate > 0, let level = format.hevc?.generalLevelIdc, let band = Self.levelBitRateBand(level) {
            p.pointee.rc.vbvMaxBitrate = min(max(p.pointee.rc.vbvMaxBitrate, band.lowerBound), band.upperBound)
        }
        guard x265.api.encoder_reconfig?(h, p) ?? -1 >= 0 else {
            throw MediaError(.encoderFailed, field: "x265_encoder_reconfig", "x265 refused the new rate settings")
        }
    }

    /// The VBV rates in kbit/s that keep a stream at `generalLevelIdc` (30 × the level) when its
    /// size does not need that level: above the next lower level's MaxBR and at most its own
    /// (H.265 Table A.8, Main tier, as x265's level choice reads it).
    static func levelBitRateBand(_ generalLevelIdc: Int) -> ClosedRange<Int32>? {
        let maxBitRates: [(level: Int, kbps: Int32)] = [(30, 128), (60, 1_500), (63, 3_000), (90, 6_000), (93, 10_000), (120, 12_000),
                                                         (123, 20_000), (150, 25_000), (153, 40_000), (156, 60_000), (180, 60_000),
                                                         (183, 120_000), (186, 240_000)]
        guard let index = maxBitRates.firstIndex(where: { $0.level == generalLevelIdc }) else { return nil }
        let floor = index == 0 ? 1 : min(maxBitRates[index - 1].kbps + 1, maxBitRates[index].kbps)
        return floor...maxBitRates[index].kbps
    }

    /// Encodes one frame; returns what x265 outputs now (zero or one access unit).
    ///
    /// The corresponding x265 call is `x265_encoder_encode`.
    func encode(_ frame: VideoFrame, presentationTimeStamp: Duration, duration: Duration, forceKeyframe: Bool) throws(MediaError) -> EncodedFrame? {
        guard let h = handle else { throw MediaError(.invalidState, "the x265 encoder is closed") }
        var pic = x265_picture()
        x265.api.picture_init?(x265.param, &pic)
        pic.pts = timing.add(presentationTimeStamp: presentationTimeStamp, duration: duration)
        pic.sliceType = forceKeyframe ? cx265_type_idr() : cx265_type_auto()
        pic.colorSpace = cx265_csp_i420()
        let result = try frame.withPlanarPlanes(scratch: &scratch) { planes in
            pic.bitDepth = Int32(planes.bitDepth)
            pic.planes.0 = UnsafeMutableRawPointer(mutating: planes.y)
            pic.planes.1 = UnsafeMutableRawPointer(mutating: planes.u)
            pic.planes.2 = UnsafeMutableRawPointer(mutating: planes.v)
            pic.stride = (Int32(planes.yStride), Int32(planes.uStride), Int32(planes.vStride))
            return Result { () throws(MediaError) in
                try withUnsafeMutablePointer(to: &pic) { (input) throws(MediaError) in try self.encodeRaw(h, input) }
            }
        }
        return try result.get()
    }

    /// Drains every delayed frame (lookahead, B-frames, frame threads), then closes the
    /// encoder: x265 cannot take new frames after a flush.
    func flushAndClose() throws(MediaError) -> [EncodedFrame] {
        guard let h = handle else { return [] }
        var out: [EncodedFrame] = []
        defer { close() }
        while let frame = try encodeRaw(h, nil) { out.append(frame) }
        return out
    }

    /// One `x265_encoder_encode` call (a flush with `input` nil); the access unit it outputs.
    private func encodeRaw(_ h: OpaquePointer, _ input: UnsafeMutablePointer<x265_picture>?) throws(MediaError) -> EncodedFrame? {
        var nals: UnsafeMutablePointer<x265_nal>?
        var count: UInt32 = 0
        var out = x265_picture()
        x265.api.picture_init?(x265.param, &out)
        let status = x265.api.encoder_encode?(h, &nals, &count, input, &out) ?? -1
        guard status >= 0 else { throw MediaError(.encoderFailed, field: "x265_encoder_encode", "x265 failed to encode (status \(status))") }
        guard status > 0, let nals, count > 0 else { return nil }
        // x265 writes the NAL units of one call back to back (with their 4-byte lengths): one
        // copy, one allocation per frame; otherwise they are gathered.
        var data: [UInt8]
        var sliceNALType: UInt32?
        var size = 0
        for i in 0..<Int(count) {
            size += Int(nals[i].sizeBytes)
            if nals[i].type < 32, sliceNALType == nil { sliceNALType = nals[i].type }
        }
        if let first = nals[0].payload, let last = nals[Int(count) - 1].payload,
           last + Int(nals[Int(count) - 1].sizeBytes) == first + size {
            data = [UInt8](UnsafeBufferPointer(start: first, count: size))
        } else {
            data = []
            data.reserveCapacity(size)
            for i in 0..<Int(count) where nals[i].payload != nil {
                data.append(contentsOf: UnsafeBufferPointer(start: nals[i].payload, count: Int(nals[i].sizeBytes)))
            }
        }
        // The slices' NAL unit type tells the picture (x265 reports a forced IDR as X265_TYPE_IDR
        // even when, with open GOP, it codes a CRA picture: IRAP either way).
        let isIRAP = sliceNALType.map { (16...23).contains($0) } ?? false
        let frameType: EncodedFrame.FrameType = switch (sliceNALType, out.sliceType) {
        case (19?, _), (20?, _): .idr
        case (_, cx265_type_idr()), (_, X265_TYPE_I): .i
        case (_, X265_TYPE_BREF): .bReference
        case (_, X265_TYPE_B): .b
        default: .p
        }
        let (pts, dts, duration) = timing.output(pts: out.pts, dts: out.dts)
        return EncodedFrame(data: data, presentationTimeStamp: pts, decodeTimeStamp: dts, duration: duration,
                            frameType: frameType, isKeyframe: isIRAP, format: format, width: width, height: height)
    }

    /// Closes the encoder once. The corresponding x265 call is `x265_encoder_close`.
    func close() {
        x265.close()
    }
}
#endif
