public import AudioCodecs
internal import CAVCodec
public import MediaContainers
public import MediaCore

/// Converts an audio track that an output cannot carry (G.711 or Opus, which RTMP and FLV do not
/// take) to AAC-LC: each frame is decoded and the samples encoded again by FFmpeg's native AAC
/// encoder, at the source's rate and channel count — AudioToolbox's `AudioConverterRef`
/// (`AudioConverterNew`, `AudioConverterFillComplexBuffer`).
///
/// One converter serves one track, from one task at a time (it is not `Sendable`). Output frames
/// are timed on the input's timeline, each 1024 samples after the one before: the frame that
/// holds the first input sample at that sample's presentation time, and the encoder's priming
/// frame (its delay, as in any AAC stream) one frame before it, so the audio stays where the
/// source put it.
///
/// The corresponding libavcodec calls are `avcodec_send_packet`/`avcodec_receive_frame` on the
/// decoder and `avcodec_send_frame`/`avcodec_receive_packet` on the encoder.
public final class AudioConverter: AudioFrameConverting {
    /// The format frames are taken in (G.711 A-law or µ-law, or Opus).
    public let inputFormat: AudioFormatDescription
    /// The AAC-LC format of the frames handed out: the encoder's `AudioSpecificConfig` as the
    /// magic cookie, the input's rate and channel count.
    public let outputFormat: AudioFormatDescription

    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var decoded: UnsafeMutablePointer<AVFrame>?
    private var input: UnsafeMutablePointer<AVFrame>?
    /// Decoded samples not yet encoded, one array per channel.
    private var pending: [[Float]]
    private let frameSize: Int
    /// The presentation time of the first input frame; nil before it.
    private var origin: Duration?
    /// Samples handed to the encoder so far (the next frame's `pts`).
    private var samplesEncoded: Int64 = 0

    /// The largest backlog of decoded samples kept (per channel): a second at 48 kHz. A decoder
    /// that returns more than the encoder takes cannot grow memory without bound.
    private static let maximumPendingSamples = 48_000

    /// A converter from `inputFormat` to AAC-LC at `bitRate` bits per second.
    ///
    /// - Parameters:
    ///   - inputFormat: a G.711 (`.pcma`, `.pcmu`) or Opus format.
    ///   - bitRate: the AAC bit rate; default 64 kbit/s per channel.
    /// - Throws: `unsupported` for another codec or a channel count outside 1…8; `decoderFailed`
    ///   when libavcodec cannot open the decoder or the encoder.
    public init(from inputFormat: AudioFormatDescription, bitRate: Int? = nil) throws(MediaError) {
        let name: String
        switch inputFormat.codec {
        case .pcma: name = "pcm_alaw"
        case .pcmu: name = "pcm_mulaw"
        case .opus: name = "opus"
        case .aac: throw MediaError(.unsupported, field: "codec", "the track is AAC already")
        }
        let channels = inputFormat.channelCount
        guard (1...8).contains(channels), inputFormat.sampleRate > 0 else {
            throw MediaError(.unsupported, field: "channelCount", "\(channels) channels at \(inputFormat.sampleRate) Hz")
        }
        self.inputFormat = inputFormat
        var error: Int32 = 0
        let cookie = inputFormat.magicCookie
        decoder = cookie.withUnsafeBufferPointer { bytes in
            cav_audio_decoder_open(name, Int32(inputFormat.sampleRate), Int32(channels), bytes.baseAddress, Int32(bytes.count), &error)
        }
        guard decoder != nil else { throw LibAVCodecDecoder.error(error, "opening the \(name) decoder") }
        let rate = bitRate ?? 64_000 * channels
        encoder = cav_aac_encoder_open(Int32(inputFormat.sampleRate), Int32(channels), Int32(clamping: rate), &error)
        guard let encoder else {
            cav_close(decoder)
            throw LibAVCodecDecoder.error(error, "opening the AAC encoder at \(inputFormat.sampleRate) Hz")
        }
        frameSize = max(Int(cav_encoder_frame_size(encoder)), 1)
        var config = [UInt8](repeating: 0, count: Int(cav_extradata(encoder, nil, 0)))
        _ = config.withUnsafeMutableBufferPointer { cav_extradata(encoder, $0.baseAddress, Int32($0.count)) }
        var format = (try? AudioSpecificConfig(config).formatDescription)
            ?? AudioSpecificConfig(samplingFrequency: inputFormat.sampleRate, channelConfiguration: channels).formatDescription
        format.channelCount = channels
        outputFormat = format
        pending = Array(repeating: [], count: channels)
        packet = av_packet_alloc()
        decoded = av_frame_alloc()
        input = av_frame_alloc()
        guard packet != nil, decoded != nil, input != nil else {
            release()
            throw MediaError(.decoderFailed, "av_packet_alloc/av_frame_alloc: out of memory")
        }
    }

    deinit { release() }

    private func release() {
        if decoder != nil { cav_close(decoder); decoder = nil }
        if encoder != nil { cav_close(encoder); encoder = nil }
        av_packet_free(&packet)
        av_frame_free(&decoded)
        av_frame_free(&input)
    }

    /// Converts one input frame: the AAC frames it completes (none while fewer than 1024 samples
    /// are waiting). A frame the decoder rejects (damaged) is skipped: the error is thrown and
    /// the next frame converts as before.
    ///
    /// - Parameter frame: an audio frame of ``inputFormat``.
    /// - Returns: the AAC frames ready, in order.
    /// - Throws: `decoderFailed` for a frame libavcodec cannot decode or encode.
    public func convert(_ frame: CompressedFrame) throws(MediaError) -> [CompressedFrame] {
        guard let decoder, let packet, let decoded else { return [] }
        if origin == nil { origin = frame.presentationTime }
        guard !frame.data.isEmpty else { return [] }
        guard let destination = cav_packet_prepare(packet, Int32(clamping: frame.data.count)) else {
            throw MediaError(.decoderFailed, "av_new_packet: out of memory")
        }
        frame.data.withUnsafeBytes { UnsafeMutableRawPointer(destination).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        let sent = cav_send_prepared(decoder, packet, Int64.min, 0, 1)
        guard sent >= 0 else { throw LibAVCodecDecoder.error(sent, "decoding a \(inputFormat.codec.rawValue) frame") }
        while cav_receive(decoder, decoded) >= 0 {
            var samples: Int32 = 0, channels: Int32 = 0
            cav_audio_frame_shape(decoded, &samples, &channels)
            let count = Int(samples)
            guard count > 0, pending[0].count + count <= Self.maximumPendingSamples else { av_frame_unref(decoded); continue }
            for channel in pending.indices {
                let source = min(channel, Int(channels) - 1)
                var plane = [Float](repeating: 0, count: count)
                if source >= 0 { _ = plane.withUnsafeMutableBufferPointer { cav_audio_frame_channel(decoded, Int32(source), $0.baseAddress) } }
                pending[channel] += plane
            }
            av_frame_unref(decoded)
        }
        return try encodeWaiting(draining: false)
    }

    /// Ends the track: the samples still waiting (padded with silence to a whole frame) and the
    /// encoder's delayed frames.
    ///
    /// - Returns: the last AAC frames.
    /// - Throws: `decoderFailed` when the encoder fails.
    public func finish() throws(MediaError) -> [CompressedFrame] {
        guard encoder != nil, !pending[0].isEmpty || samplesEncoded > 0 else { return [] }
        if !pending[0].isEmpty {
            for channel in pending.indices { pending[channel] += [Float](repeating: 0, count: frameSize - pending[channel].count % frameSize) }
        }
        return try encodeWaiting(draining: true)
    }

    /// Encodes every whole frame of waiting samples (and, draining, the encoder's delay).
    private func encodeWaiting(draining: Bool) throws(MediaError) -> [CompressedFrame] {
        guard let encoder, let input, let packet else { return [] }
        var output: [CompressedFrame] = []
        func receive() throws(MediaError) {
            while true {
                let status = cav_encoder_receive(encoder, packet)
                if status == cav_error_again() || status == cav_error_eof() { return }
                guard status >= 0 else { throw LibAVCodecDecoder.error(status, "encoding AAC") }
                var size: Int32 = 0, pts: Int64 = 0
                let data = cav_packet_data(packet, &size, &pts)
                let bytes = data.map { [UInt8](UnsafeBufferPointer(start: $0, count: Int(size))) } ?? []
                // The encoder's priming frame has a negative `pts`: it starts before the first input sample.
                let time = (origin ?? .zero) + .seconds(Double(pts) / Double(inputFormat.sampleRate))
                output.append(CompressedFrame(data: bytes, format: outputFormat, presentationTime: time))
                cav_packet_unref(packet)
            }
        }
        while pending[0].count >= frameSize {
            let status = cav_audio_frame_prepare(input, Int32(frameSize), Int32(pending.count), Int32(inputFormat.sampleRate), samplesEncoded)
            guard status >= 0 else { throw LibAVCodecDecoder.error(status, "av_frame_get_buffer") }
            for channel in pending.indices {
                let plane = cav_audio_frame_plane(input, Int32(channel))
                pending[channel].withUnsafeBufferPointer { plane?.update(from: $0.baseAddress!, count: frameSize) }
                pending[channel].removeFirst(frameSize)
            }
            samplesEncoded += Int64(frameSize)
            let sent = cav_encoder_send(encoder, input)
            guard sent >= 0 else { throw LibAVCodecDecoder.error(sent, "encoding AAC") }
            try receive()
        }
        if draining {
            _ = cav_encoder_send(encoder, nil)
            try receive()
        }
        return output
    }
}
