internal import CAVCodec
import H264

/// One libavcodec H.264 or H.265 decoder. Not thread-safe: the session uses it from its decoding queue
/// only (and opens it under the session's lock before the first job reaches the queue).
final class LibAVCodecDecoder {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let packet: UnsafeMutablePointer<AVPacket>
    private let pool = FramePool()
    /// libyuv's conversion target (0 I420, 1 NV12, 2 BGRA), nil for native output.
    private let conversionTarget: Int32?
    /// The hardware decoder in use; nil when decoding in software.
    let hardwareAcceleration: DecoderConfiguration.HardwareAcceleration?
    /// Frame geometry of the last output, to mark format changes.
    private var lastGeometry: (Int32, Int32, Int32) = (0, 0, -1)
    /// Time and duration (µs) of the last output, to stamp frames whose access unit had no time.
    private var lastOutputTime: (pts: Int64, duration: Int64)?

    /// Opens libavcodec's decoder of `codec`; `reorderDepth` frames of output delay from the
    /// start (libavcodec's `has_b_frames`).
    /// The corresponding libavcodec calls are `avcodec_alloc_context3` and `avcodec_open2`.
    init(codec: VideoCodec, configuration: DecoderConfiguration, reorderDepth: Int) throws(MediaError) {
        Self.silenceLibraryLog
        var status: Int32 = 0
        var hardwareInUse: Int32 = 0
        let opened = { (hardware: UnsafePointer<CChar>?) in
            cav_decoder_open(codec == .hevc ? 1 : 0, nil, 0, Int32(configuration.threadCount), configuration.realTime ? 1 : 0,
                          Int32(clamping: reorderDepth), hardware, &hardwareInUse, &status)
        }
        let context: UnsafeMutablePointer<AVCodecContext>?
        if let hardware = configuration.hardwareAcceleration {
            context = hardware.rawValue.withCString { opened($0) }
        } else {
            context = opened(nil)
        }
        guard let context else {
            throw Self.error(status, "opening libavcodec's \(codec == .hevc ? "H.265" : "H.264") decoder")
        }
        hardwareAcceleration = hardwareInUse != 0 ? configuration.hardwareAcceleration : nil
        conversionTarget = switch configuration.outputPixelFormat {
        case .native: nil
        case .i420: 0
        case .nv12: 1
        case .bgra: 2
        }
        guard let packet = av_packet_alloc() else {
            cav_close(context)
            throw MediaError(.decoderFailed, "av_packet_alloc: out of memory")
        }
        self.context = context
        self.packet = packet
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        cav_close(context)
    }

    /// libavcodec logs to standard error by default; the session reports instead.
    private static let silenceLibraryLog: Void = { cav_set_log_quiet() }()

    static func error(_ status: Int32, _ what: String) -> MediaError {
        var text = [CChar](repeating: 0, count: 128)
        cav_error_string(status, &text, text.count)
        let message = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return MediaError(.decoderFailed, "\(what): \(message) (\(status))")
    }

    /// The result of sending one access unit.
    enum SendResult {
        /// libavcodec took it.
        case accepted
        /// libavcodec rejected it as damaged (`AVERROR_INVALIDDATA`): reported, skipped.
        case damaged
    }

    /// Sends one packet of `size` bytes that `fill` writes (Annex B), with times in microseconds.
    /// The corresponding libavcodec call is `avcodec_send_packet`.
    func send(size: Int, presentationTimeStamp: Int64?, duration: Int64, isKeyframe: Bool,
              fill: (UnsafeMutableRawBufferPointer) throws(MediaError) -> Void) throws(MediaError) -> SendResult {
        guard size > 0, size < Int(Int32.max) - 64 else { return .damaged }
        guard let data = cav_packet_prepare(packet, Int32(size)) else {
            throw MediaError(.decoderFailed, "av_new_packet: out of memory")
        }
        do {
            try fill(UnsafeMutableRawBufferPointer(start: data, count: size))
        } catch {
            av_packet_unref(packet)
            throw error
        }
        let status = cav_send_prepared(context, packet, presentationTimeStamp ?? Int64.min, duration, isKeyframe ? 1 : 0)
        if status == 0 { return .accepted }
        if status == cav_error_invalid_data() { return .damaged }
        throw Self.error(status, "avcodec_send_packet")
    }

    /// Hands every frame libavcodec has ready to `deliver`, marking the first frame of a new
    /// format (`mark`) or of a new size or pixel format.
    /// The corresponding libavcodec call is `avcodec_receive_frame`.
    ///
    /// - Returns: true when the decoder reported the end of a drain (`AVERROR_EOF`).
    @discardableResult
    func receiveFrames(mark: inout FormatChangeMark, _ deliver: (DecodedFrame) -> Void) throws(MediaError) -> Bool {
        while true {
            guard var frame = pool.take() else { throw MediaError(.decoderFailed, "av_frame_alloc: out of memory") }
            let status = cav_receive(context, frame)
            if status < 0 {
                pool.recycle(frame)
                if status == cav_error_again() { return false }
                if status == cav_error_eof() { return true }
                if status == cav_error_invalid_data() { continue }
                throw Self.error(status, "avcodec_receive_frame")
            }
            if let target = conversionTarget, !(target == 0 && cav_frame_is_i420(frame) != 0) {
                guard let converted = pool.take() else { pool.recycle(frame); throw MediaError(.decoderFailed, "av_frame_alloc: out of memory") }
                let status = cav_frame_convert(frame, converted, target)
                let name = String(cString: cav_pix_fmt_name(frame.pointee.format))
                pool.recycle(frame)
                guard status >= 0 else {
                    pool.recycle(converted)
                    throw Self.error(status, "converting \(name) frames to the output pixel format")
                }
                frame = converted
            }
            var info = cav_frame_info()
            cav_frame_get_info(context, frame, &info)
            guard let format = PixelFormatDescription(format: info.format) else {
                pool.recycle(frame)
                throw MediaError(.decoderFailed, "libavcodec output \(String(cString: cav_pix_fmt_name(info.format))) frames, a pixel format DecodedFrame does not describe")
            }
            if info.pts == Int64.min {
                // Untimed: after the previous frame, in output order (zero for the first).
                info.pts = lastOutputTime.map { $0.pts &+ $0.duration } ?? 0
            }
            lastOutputTime = (info.pts, info.duration)
            let geometry = (info.width, info.height, info.format)
            let geometryChanged = lastGeometry.2 >= 0 && geometry != lastGeometry
            lastGeometry = geometry
            let changed = mark.take(presentationTimeStamp: info.pts == Int64.min ? nil : info.pts) || geometryChanged
            deliver(DecodedFrame(buffer: FrameBuffer(frame: frame, pool: pool), info: info, format: format, formatChanged: changed))
        }
    }

    /// Drains delayed frames into `deliver` and makes the decoder usable again.
    /// The corresponding libavcodec calls are `avcodec_send_packet(NULL)`, `avcodec_receive_frame`
    /// until `AVERROR_EOF`, and `avcodec_flush_buffers`.
    func drain(mark: inout FormatChangeMark, _ deliver: (DecodedFrame) -> Void) throws(MediaError) {
        let status = cav_send_drain(context)
        if status < 0 && status != cav_error_eof() { throw Self.error(status, "avcodec_send_packet(NULL)") }
        try receiveFrames(mark: &mark, deliver)
        cav_flush(context)
    }
}

/// Which output frame is the first of a new format: the one decoded from the access unit that
/// brought the format (found by its presentation time, since frames leave libavcodec in
/// presentation order), or the next output when that access unit carried no time.
struct FormatChangeMark {
    private var pending = false
    private var presentationTimeStamp: Int64?

    /// A new format starts with the access unit of this time.
    mutating func set(presentationTimeStamp: Int64?) {
        pending = true
        self.presentationTimeStamp = presentationTimeStamp
    }

    /// True for the frame to mark (once).
    mutating func take(presentationTimeStamp pts: Int64?) -> Bool {
        guard pending else { return false }
        if let wanted = presentationTimeStamp, let pts, pts < wanted { return false }
        pending = false
        return true
    }
}
