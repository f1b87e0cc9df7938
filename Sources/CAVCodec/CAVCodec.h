#ifndef CAVCODEC_H
#define CAVCODEC_H
// C at the edge for the decoder: the only libavcodec that swift-h264 touches. Everything here is
// a `static inline` shim with a `cav_` prefix, so Swift never sees FFmpeg's macros (AVERROR,
// AV_INPUT_BUFFER_PADDING_SIZE, AV_FRAME_FLAG_CORRUPT …) or deprecated fields.
#include <stdint.h>
#include <string.h>

// A missing system library is named here, at compile time, with the package that provides it,
// rather than as a bare "libavcodec/avcodec.h not found".
#if defined(__has_include)
#if !__has_include(<libavcodec/avcodec.h>)
#error "swift-h264 needs libavcodec: install it with 'apt-get install libavcodec-dev' (Debian, Ubuntu) or 'brew install ffmpeg'"
#endif
#if !__has_include(<libavutil/frame.h>)
#error "swift-h264 needs libavutil: install it with 'apt-get install libavutil-dev' (Debian, Ubuntu) or 'brew install ffmpeg'"
#endif
#if !__has_include(<libyuv/convert.h>)
#error "swift-h264 needs libyuv: install it with 'apt-get install libyuv-dev' (Debian, Ubuntu) or 'brew install libyuv'"
#endif
#endif
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/md5.h>
#include <libavutil/pixdesc.h>

/// `AVERROR(EAGAIN)`: the decoder wants more input before it gives a frame.
static inline int cav_error_again(void) { return AVERROR(EAGAIN); }
/// `AVERROR_EOF`: the decoder is drained.
static inline int cav_error_eof(void) { return AVERROR_EOF; }
/// `AVERROR_INVALIDDATA`: damaged input.
static inline int cav_error_invalid_data(void) { return AVERROR_INVALIDDATA; }
/// `AV_INPUT_BUFFER_PADDING_SIZE`: zero bytes every packet and the extradata carry beyond their end.
static inline int cav_padding_size(void) { return AV_INPUT_BUFFER_PADDING_SIZE; }

/// FFmpeg's message for an error code.
static inline void cav_error_string(int error, char *buffer, size_t size) {
    av_strerror(error, buffer, size);
}

/// Silences libavcodec's own log (the session reports what matters through swift-log).
static inline void cav_set_log_quiet(void) { av_log_set_level(AV_LOG_QUIET); }

/// Picks the hardware pixel format the context's `opaque` names when libavcodec offers it,
/// otherwise libavcodec's default (software) choice.
static inline enum AVPixelFormat cav_get_format(AVCodecContext *ctx, const enum AVPixelFormat *formats) {
    enum AVPixelFormat wanted = (enum AVPixelFormat)(intptr_t)ctx->opaque;
    for (const enum AVPixelFormat *p = formats; *p != AV_PIX_FMT_NONE; p++) {
        if (*p == wanted) return *p;
    }
    return avcodec_default_get_format(ctx, formats);
}

/// Attaches a hardware device of FFmpeg's type `name` ("vaapi", "cuda", "qsv" …) to `ctx`
/// through hwaccel and `get_format`, as FFmpeg's own tools do. Returns 1 when a device opened,
/// 0 when not (no such type, no hwaccel for H.264, no device): the context then decodes in
/// software.
static inline int cav_attach_hardware(AVCodecContext *ctx, const AVCodec *codec, const char *name) {
    enum AVHWDeviceType type = av_hwdevice_find_type_by_name(name);
    if (type == AV_HWDEVICE_TYPE_NONE) return 0;
    enum AVPixelFormat format = AV_PIX_FMT_NONE;
    for (int i = 0;; i++) {
        const AVCodecHWConfig *config = avcodec_get_hw_config(codec, i);
        if (config == NULL) break;
        if ((config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) && config->device_type == type) {
            format = config->pix_fmt;
            break;
        }
    }
    if (format == AV_PIX_FMT_NONE) return 0;
    AVBufferRef *device = NULL;
    if (av_hwdevice_ctx_create(&device, type, NULL, NULL, 0) < 0) return 0;
    ctx->hw_device_ctx = device;
    ctx->opaque = (void *)(intptr_t)format;
    ctx->get_format = cav_get_format;
    return 1;
}

/// Opens an H.264 decoder, or an H.265 one when `hevc` is nonzero. `extradata` (an avcC or Annex-B parameter sets, may be NULL) is copied
/// with padding. `threads`: 0 = auto; `low_delay`: no frame threading and AV_CODEC_FLAG_LOW_DELAY.
/// `reorder_depth` is the output delay to start with (`has_b_frames`), as FFmpeg's command-line
/// tool sets it from probing. `hardware` (NULL for none) names a device type to try;
/// `*hardware_in_use` says whether one opened. Returns NULL on failure with the error in `*error`.
static inline AVCodecContext *cav_decoder_open(int hevc, const uint8_t *extradata, int extradata_size,
                                            int threads, int low_delay, int reorder_depth,
                                            const char *hardware, int *hardware_in_use, int *error) {
    *error = 0;
    *hardware_in_use = 0;
    const AVCodec *codec = avcodec_find_decoder(hevc ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264);
    if (codec == NULL) { *error = AVERROR_DECODER_NOT_FOUND; return NULL; }
    AVCodecContext *ctx = avcodec_alloc_context3(codec);
    if (ctx == NULL) { *error = AVERROR(ENOMEM); return NULL; }
    if (extradata != NULL && extradata_size > 0) {
        ctx->extradata = av_mallocz((size_t)extradata_size + AV_INPUT_BUFFER_PADDING_SIZE);
        if (ctx->extradata == NULL) { avcodec_free_context(&ctx); *error = AVERROR(ENOMEM); return NULL; }
        memcpy(ctx->extradata, extradata, (size_t)extradata_size);
        ctx->extradata_size = extradata_size;
    }
    ctx->thread_count = threads;
    if (low_delay) {
        ctx->thread_type = FF_THREAD_SLICE;
        ctx->flags |= AV_CODEC_FLAG_LOW_DELAY;
    } else {
        ctx->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    }
    ctx->has_b_frames = reorder_depth;
    ctx->pkt_timebase = (AVRational){1, 1000000};
    if (hardware != NULL) *hardware_in_use = cav_attach_hardware(ctx, codec, hardware);
    int status = avcodec_open2(ctx, codec, NULL);
    if (status < 0) { avcodec_free_context(&ctx); *error = status; return NULL; }
    return ctx;
}

/// Frees a decoder (and sets the pointer to NULL).
static inline void cav_close(AVCodecContext *ctx) {
    avcodec_free_context(&ctx);
}

/// Makes `pkt` own a new zero-padded buffer of `size` bytes and returns it for the caller to fill
/// (NULL when out of memory).
static inline uint8_t *cav_packet_prepare(AVPacket *pkt, int size) {
    av_packet_unref(pkt);
    if (av_new_packet(pkt, size) < 0) return NULL;
    return pkt->data;
}

/// Sends the packet `cav_packet_prepare` filled, with times in microseconds (INT64_MIN = none),
/// then releases it.
static inline int cav_send_prepared(AVCodecContext *ctx, AVPacket *pkt, int64_t pts, int64_t duration, int key) {
    pkt->pts = pts == INT64_MIN ? AV_NOPTS_VALUE : pts;
    pkt->dts = AV_NOPTS_VALUE;
    pkt->duration = duration;
    if (key) pkt->flags |= AV_PKT_FLAG_KEY;
    int status = avcodec_send_packet(ctx, pkt);
    av_packet_unref(pkt);
    return status;
}

/// Starts draining: the decoder outputs its delayed frames, then AVERROR_EOF.
static inline int cav_send_drain(AVCodecContext *ctx) { return avcodec_send_packet(ctx, NULL); }

/// FFmpeg's name of a pixel format ("yuv420p10le"), or "unknown".
static inline const char *cav_pix_fmt_name(int format) {
    const char *name = av_get_pix_fmt_name((enum AVPixelFormat)format);
    return name ? name : "unknown";
}

/// A pixel format's descriptor (libavutil's `AVPixFmtDescriptor`) in plain ints. Components are
/// in the descriptor's order: Y, Cb, Cr (A) for YUV and grey, R, G, B (A) for RGB; for each, the
/// plane it lives in, the bytes from one pixel to the next in that plane (`step`), its byte
/// offset in a pixel and its depth in bits. `other` is set for formats outside planar, semi-planar
/// and packed samples: paletted, bitstream, hardware surfaces, Bayer, floating point.
typedef struct cav_pix_fmt_info {
    int components, planes, log2_chroma_w, log2_chroma_h;
    int rgb, planar, alpha, big_endian, other;
    int plane[4], step[4], offset[4], depth[4];
} cav_pix_fmt_info;

/// Fills `info` for `format`; returns 0, or -1 for a format libavutil does not know.
static inline int cav_pix_fmt_get_info(int format, cav_pix_fmt_info *info) {
    memset(info, 0, sizeof *info);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    if (d == NULL) return -1;
    info->components = d->nb_components;
    info->planes = av_pix_fmt_count_planes((enum AVPixelFormat)format);
    info->log2_chroma_w = d->log2_chroma_w;
    info->log2_chroma_h = d->log2_chroma_h;
    info->rgb = (d->flags & AV_PIX_FMT_FLAG_RGB) != 0;
    info->planar = (d->flags & AV_PIX_FMT_FLAG_PLANAR) != 0;
    info->alpha = (d->flags & AV_PIX_FMT_FLAG_ALPHA) != 0;
    info->big_endian = (d->flags & AV_PIX_FMT_FLAG_BE) != 0;
    info->other = (d->flags & (AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL
                               | AV_PIX_FMT_FLAG_BAYER | AV_PIX_FMT_FLAG_FLOAT)) != 0;
    for (int c = 0; c < d->nb_components && c < 4; c++) {
        info->plane[c] = d->comp[c].plane;
        info->step[c] = d->comp[c].step;
        info->offset[c] = d->comp[c].offset;
        info->depth[c] = d->comp[c].depth;
    }
    return 0;
}

/// The bytes of samples in one row of `plane` for a picture `width` pixels wide, as
/// `av_image_copy_to_buffer` copies it (libavutil's `av_image_get_linesize`); negative when the
/// format has no such plane.
static inline int cav_pix_fmt_row_bytes(int format, int width, int plane) {
    return av_image_get_linesize((enum AVPixelFormat)format, width, plane);
}

/// The pixel format FFmpeg calls `name` ("gbrp10le"), or -1 (`AV_PIX_FMT_NONE`).
static inline int cav_pix_fmt_from_name(const char *name) { return (int)av_get_pix_fmt(name); }

/// Gives `f`, an empty frame, a new `width` × `height` picture of `format` whose buffers hold a
/// byte pattern (stride padding included): a synthetic frame of any pixel format, for tests.
static inline int cav_frame_make_pattern(AVFrame *f, int format, int width, int height) {
    f->format = format;
    f->width = width;
    f->height = height;
    int status = av_frame_get_buffer(f, 0);
    if (status < 0) return status;
    for (int i = 0; i < AV_NUM_DATA_POINTERS && f->buf[i] != NULL; i++) {
        for (size_t k = 0; k < f->buf[i]->size; k++) f->buf[i]->data[k] = (uint8_t)(k * 131 + (k >> 8) + 17 * (size_t)i);
    }
    return 0;
}

/// The byte count of the frame's samples packed without stride padding.
static inline int cav_frame_packed_size(const AVFrame *f) {
    return av_image_get_buffer_size((enum AVPixelFormat)f->format, f->width, f->height, 1);
}

/// Copies the frame's samples, plane after plane without stride padding, into `buffer`.
static inline int cav_frame_copy_packed(const AVFrame *f, uint8_t *buffer, int size) {
    return av_image_copy_to_buffer(buffer, size, (const uint8_t *const *)f->data, f->linesize,
                                   (enum AVPixelFormat)f->format, f->width, f->height, 1);
}

/// Receives one decoded frame into `frame` (0), or EAGAIN / EOF / an error. A frame in a
/// hardware surface is downloaded into system memory (`av_hwframe_transfer_data`) first.
static inline int cav_receive(AVCodecContext *ctx, AVFrame *frame) {
    int status = avcodec_receive_frame(ctx, frame);
    if (status < 0 || frame->hw_frames_ctx == NULL) return status;
    AVFrame *software = av_frame_alloc();
    if (software == NULL) { av_frame_unref(frame); return AVERROR(ENOMEM); }
    status = av_hwframe_transfer_data(software, frame, 0);
    if (status >= 0) status = av_frame_copy_props(software, frame);
    av_frame_unref(frame);
    if (status >= 0) av_frame_move_ref(frame, software);
    av_frame_free(&software);
    return status;
}

/// Makes the context usable again after draining.
static inline void cav_flush(AVCodecContext *ctx) { avcodec_flush_buffers(ctx); }

/// What Swift reads of a decoded frame, in one call (its pixel format: `cav_pix_fmt_get_info`).
typedef struct cav_frame_info {
    int width, height, format;
    int coded_width, coded_height;
    int64_t pts, duration;
    int key_frame, pict_type, corrupt, decode_error_flags, interlaced, top_field_first;
    int sar_num, sar_den;
    int color_primaries, color_trc, colorspace, color_range;
    size_t crop_top, crop_bottom, crop_left, crop_right;
} cav_frame_info;

static inline void cav_frame_get_info(const AVCodecContext *ctx, const AVFrame *f, cav_frame_info *info) {
    info->width = f->width;
    info->height = f->height;
    info->format = f->format;
    info->coded_width = ctx->coded_width;
    info->coded_height = ctx->coded_height;
    // The packet's own time, reordered with its picture (not best_effort_timestamp, which
    // guesses one for untimed packets; the session stamps those itself).
    info->pts = f->pts == AV_NOPTS_VALUE ? INT64_MIN : f->pts;
#if LIBAVUTIL_VERSION_MAJOR >= 58
    info->duration = f->duration;
#else
    info->duration = f->pkt_duration;
#endif
    info->key_frame = f->key_frame;
    info->pict_type = (int)f->pict_type;
    info->corrupt = (f->flags & AV_FRAME_FLAG_CORRUPT) != 0;
    info->decode_error_flags = f->decode_error_flags;
    info->interlaced = f->interlaced_frame;
    info->top_field_first = f->top_field_first;
    info->sar_num = f->sample_aspect_ratio.num;
    info->sar_den = f->sample_aspect_ratio.den;
    info->color_primaries = (int)f->color_primaries;
    info->color_trc = (int)f->color_trc;
    info->colorspace = (int)f->colorspace;
    info->color_range = (int)f->color_range;
    info->crop_top = f->crop_top;
    info->crop_bottom = f->crop_bottom;
    info->crop_left = f->crop_left;
    info->crop_right = f->crop_right;
}

/// Plane `i`'s data pointer and stride (stride may be negative in FFmpeg; not for H.264 output).
static inline const uint8_t *cav_frame_plane(const AVFrame *f, int i, int *stride) {
    *stride = f->linesize[i];
    return f->data[i];
}

/// The MD5 of the frame's samples as FFmpeg's framemd5 muxer hashes them: every plane row by row,
/// `width × bytes per sample` bytes of each row (no stride padding). `digest` gets 16 bytes.
static inline int cav_frame_md5(const AVFrame *f, uint8_t *digest) {
    int size = av_image_get_buffer_size((enum AVPixelFormat)f->format, f->width, f->height, 1);
    if (size < 0) return size;
    uint8_t *buffer = av_malloc((size_t)size);
    if (buffer == NULL) return AVERROR(ENOMEM);
    int status = av_image_copy_to_buffer(buffer, size, (const uint8_t *const *)f->data, f->linesize,
                                         (enum AVPixelFormat)f->format, f->width, f->height, 1);
    if (status >= 0) av_md5_sum(digest, buffer, size);
    av_free(buffer);
    return status < 0 ? status : size;
}
// libyuv (libyuv-dev), declared here rather than including <libyuv.h>, whose umbrella pulls in
// C++-only headers. libyuv's "ARGB" is B, G, R, A in memory on little-endian machines: BGRA.
int I422ToI420(const uint8_t *src_y, int src_stride_y, const uint8_t *src_u, int src_stride_u,
               const uint8_t *src_v, int src_stride_v, uint8_t *dst_y, int dst_stride_y,
               uint8_t *dst_u, int dst_stride_u, uint8_t *dst_v, int dst_stride_v, int width, int height);
int I444ToI420(const uint8_t *src_y, int src_stride_y, const uint8_t *src_u, int src_stride_u,
               const uint8_t *src_v, int src_stride_v, uint8_t *dst_y, int dst_stride_y,
               uint8_t *dst_u, int dst_stride_u, uint8_t *dst_v, int dst_stride_v, int width, int height);
int I010ToI420(const uint16_t *src_y, int src_stride_y, const uint16_t *src_u, int src_stride_u,
               const uint16_t *src_v, int src_stride_v, uint8_t *dst_y, int dst_stride_y,
               uint8_t *dst_u, int dst_stride_u, uint8_t *dst_v, int dst_stride_v, int width, int height);
int I420ToNV12(const uint8_t *src_y, int src_stride_y, const uint8_t *src_u, int src_stride_u,
               const uint8_t *src_v, int src_stride_v, uint8_t *dst_y, int dst_stride_y,
               uint8_t *dst_uv, int dst_stride_uv, int width, int height);
int I420ToARGB(const uint8_t *src_y, int src_stride_y, const uint8_t *src_u, int src_stride_u,
               const uint8_t *src_v, int src_stride_v, uint8_t *dst_argb, int dst_stride_argb,
               int width, int height);

/// True for 8-bit planar 4:2:0 (what I420 output passes through without a copy).
static inline int cav_frame_is_i420(const AVFrame *f) {
    return f->format == AV_PIX_FMT_YUV420P || f->format == AV_PIX_FMT_YUVJ420P;
}

/// Converts `src` (8-bit 4:2:0, 4:2:2 or 4:4:4, or 10-bit 4:2:0) into `dst`, an empty frame,
/// as 8-bit I420 (`target` 0), NV12 (1) or BGRA (2, BT.601 video range) through libyuv, with
/// `src`'s properties (times, flags, colour description). Returns 0, or a negative AVERROR
/// (`AVERROR(ENOSYS)` for a source format it does not convert).
static inline int cav_frame_convert(const AVFrame *src, AVFrame *dst, int target) {
    static const enum AVPixelFormat targets[3] = {AV_PIX_FMT_YUV420P, AV_PIX_FMT_NV12, AV_PIX_FMT_BGRA};
    if (target < 0 || target > 2) return AVERROR(EINVAL);
    int w = src->width, h = src->height, status = 0;
    const uint8_t *const *s = (const uint8_t *const *)src->data;
    const int *ls = src->linesize;
    // The 8-bit 4:2:0 picture to start from: the source itself, or a conversion of it.
    AVFrame *i420 = NULL;
    const uint8_t *y[4] = {s[0], s[1], s[2], NULL};
    int ly[4] = {ls[0], ls[1], ls[2], 0};
    if (src->format != AV_PIX_FMT_YUV420P && src->format != AV_PIX_FMT_YUVJ420P) {
        i420 = av_frame_alloc();
        if (i420 == NULL) return AVERROR(ENOMEM);
        i420->format = AV_PIX_FMT_YUV420P;
        i420->width = w;
        i420->height = h;
        status = av_frame_get_buffer(i420, 0);
        if (status < 0) { av_frame_free(&i420); return status; }
        uint8_t **d = i420->data;
        int *ld = i420->linesize;
        switch (src->format) {
        case AV_PIX_FMT_YUV422P: case AV_PIX_FMT_YUVJ422P:
            status = I422ToI420(s[0], ls[0], s[1], ls[1], s[2], ls[2], d[0], ld[0], d[1], ld[1], d[2], ld[2], w, h);
            break;
        case AV_PIX_FMT_YUV444P: case AV_PIX_FMT_YUVJ444P:
            status = I444ToI420(s[0], ls[0], s[1], ls[1], s[2], ls[2], d[0], ld[0], d[1], ld[1], d[2], ld[2], w, h);
            break;
        case AV_PIX_FMT_YUV420P10LE:
            status = I010ToI420((const uint16_t *)s[0], ls[0] / 2, (const uint16_t *)s[1], ls[1] / 2,
                                (const uint16_t *)s[2], ls[2] / 2, d[0], ld[0], d[1], ld[1], d[2], ld[2], w, h);
            break;
        default:
            status = AVERROR(ENOSYS);
        }
        if (status != 0) { av_frame_free(&i420); return status < 0 ? status : AVERROR_EXTERNAL; }
        for (int i = 0; i < 3; i++) { y[i] = d[i]; ly[i] = ld[i]; }
    }
    if (target == 0 && i420 != NULL) {
        av_frame_move_ref(dst, i420);
    } else {
        dst->format = targets[target];
        dst->width = w;
        dst->height = h;
        status = av_frame_get_buffer(dst, 0);
        if (status >= 0) {
            switch (target) {
            case 0:
                av_image_copy(dst->data, dst->linesize, y, ly, AV_PIX_FMT_YUV420P, w, h);
                break;
            case 1:
                status = I420ToNV12(y[0], ly[0], y[1], ly[1], y[2], ly[2], dst->data[0], dst->linesize[0],
                                    dst->data[1], dst->linesize[1], w, h);
                break;
            default:
                status = I420ToARGB(y[0], ly[0], y[1], ly[1], y[2], ly[2], dst->data[0], dst->linesize[0], w, h);
            }
            if (status > 0) status = AVERROR_EXTERNAL;
        }
    }
    av_frame_free(&i420);
    if (status < 0) { av_frame_unref(dst); return status; }
    av_frame_copy_props(dst, src);
    return 0;
}

// MARK: Audio (AudioConverter: G.711 and Opus decoded, encoded again as AAC-LC)

/// Opens an audio decoder by FFmpeg codec name (`pcm_alaw`, `pcm_mulaw`, `opus`) for
/// `channels` channels at `sample_rate`. Returns NULL with the error in `*error`.
static inline AVCodecContext *cav_audio_decoder_open(const char *name, int sample_rate, int channels,
                                                     const uint8_t *extradata, int extradata_size, int *error) {
    *error = 0;
    const AVCodec *codec = avcodec_find_decoder_by_name(name);
    if (codec == NULL) { *error = AVERROR_DECODER_NOT_FOUND; return NULL; }
    AVCodecContext *ctx = avcodec_alloc_context3(codec);
    if (ctx == NULL) { *error = AVERROR(ENOMEM); return NULL; }
    ctx->sample_rate = sample_rate;
    av_channel_layout_default(&ctx->ch_layout, channels);
    if (extradata != NULL && extradata_size > 0) {
        ctx->extradata = av_mallocz((size_t)extradata_size + AV_INPUT_BUFFER_PADDING_SIZE);
        if (ctx->extradata == NULL) { avcodec_free_context(&ctx); *error = AVERROR(ENOMEM); return NULL; }
        memcpy(ctx->extradata, extradata, (size_t)extradata_size);
        ctx->extradata_size = extradata_size;
    }
    int status = avcodec_open2(ctx, codec, NULL);
    if (status < 0) { avcodec_free_context(&ctx); *error = status; return NULL; }
    return ctx;
}

/// Opens FFmpeg's native AAC-LC encoder (`aac`) for planar float input at `sample_rate` with
/// `channels` channels and `bit_rate` bits per second; its AudioSpecificConfig is in
/// `ctx->extradata` (global header). Returns NULL with the error in `*error`.
static inline AVCodecContext *cav_aac_encoder_open(int sample_rate, int channels, int bit_rate, int *error) {
    *error = 0;
    const AVCodec *codec = avcodec_find_encoder_by_name("aac");
    if (codec == NULL) { *error = AVERROR_ENCODER_NOT_FOUND; return NULL; }
    AVCodecContext *ctx = avcodec_alloc_context3(codec);
    if (ctx == NULL) { *error = AVERROR(ENOMEM); return NULL; }
    ctx->sample_rate = sample_rate;
    av_channel_layout_default(&ctx->ch_layout, channels);
    ctx->sample_fmt = AV_SAMPLE_FMT_FLTP;
    ctx->bit_rate = bit_rate;
    ctx->time_base = (AVRational){1, sample_rate};
    ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    int status = avcodec_open2(ctx, codec, NULL);
    if (status < 0) { avcodec_free_context(&ctx); *error = status; return NULL; }
    return ctx;
}

/// The encoder's configuration bytes (`extradata`): their size, and a copy into `buffer` when it
/// is large enough.
static inline int cav_extradata(const AVCodecContext *ctx, uint8_t *buffer, int capacity) {
    if (ctx->extradata == NULL || ctx->extradata_size <= 0) return 0;
    if (buffer != NULL && capacity >= ctx->extradata_size) memcpy(buffer, ctx->extradata, (size_t)ctx->extradata_size);
    return ctx->extradata_size;
}

/// Samples per channel the encoder takes in each frame (1024 for AAC-LC).
static inline int cav_encoder_frame_size(const AVCodecContext *ctx) { return ctx->frame_size; }

/// The sample count and channel count of a decoded audio frame.
static inline void cav_audio_frame_shape(const AVFrame *f, int *samples, int *channels) {
    *samples = f->nb_samples;
    *channels = f->ch_layout.nb_channels;
}

/// Copies channel `channel` of a decoded frame into `out` (`f->nb_samples` floats), converted
/// from signed 16-bit, 32-bit or float samples, packed or planar. Returns 0, or -1 for another
/// sample format or a channel the frame does not have.
static inline int cav_audio_frame_channel(const AVFrame *f, int channel, float *out) {
    int n = f->nb_samples, c = f->ch_layout.nb_channels;
    if (channel < 0 || channel >= c) return -1;
    switch (f->format) {
    case AV_SAMPLE_FMT_S16: { const int16_t *s = (const int16_t *)f->data[0]; for (int i = 0; i < n; i++) out[i] = s[i * c + channel] / 32768.0f; return 0; }
    case AV_SAMPLE_FMT_S16P: { const int16_t *s = (const int16_t *)f->data[channel]; for (int i = 0; i < n; i++) out[i] = s[i] / 32768.0f; return 0; }
    case AV_SAMPLE_FMT_S32: { const int32_t *s = (const int32_t *)f->data[0]; for (int i = 0; i < n; i++) out[i] = s[i * c + channel] / 2147483648.0f; return 0; }
    case AV_SAMPLE_FMT_S32P: { const int32_t *s = (const int32_t *)f->data[channel]; for (int i = 0; i < n; i++) out[i] = s[i] / 2147483648.0f; return 0; }
    case AV_SAMPLE_FMT_FLT: { const float *s = (const float *)f->data[0]; for (int i = 0; i < n; i++) out[i] = s[i * c + channel]; return 0; }
    case AV_SAMPLE_FMT_FLTP: memcpy(out, f->data[channel], (size_t)n * sizeof(float)); return 0;
    default: return -1;
    }
}

/// Makes `f` a planar float frame of `samples` samples and `channels` channels at `sample_rate`
/// with presentation time `pts` (in samples), its buffers allocated. Returns 0 or an error.
static inline int cav_audio_frame_prepare(AVFrame *f, int samples, int channels, int sample_rate, int64_t pts) {
    av_frame_unref(f);
    f->nb_samples = samples;
    f->format = AV_SAMPLE_FMT_FLTP;
    f->sample_rate = sample_rate;
    f->pts = pts;
    av_channel_layout_default(&f->ch_layout, channels);
    return av_frame_get_buffer(f, 0);
}

/// Channel `channel`'s samples of a frame `cav_audio_frame_prepare` made, to fill.
static inline float *cav_audio_frame_plane(AVFrame *f, int channel) { return (float *)f->data[channel]; }

/// Sends a frame to an encoder (NULL: drain).
static inline int cav_encoder_send(AVCodecContext *ctx, const AVFrame *f) { return avcodec_send_frame(ctx, f); }

/// Receives one packet from an encoder into `pkt` (0), or EAGAIN / EOF / an error.
static inline int cav_encoder_receive(AVCodecContext *ctx, AVPacket *pkt) { return avcodec_receive_packet(ctx, pkt); }

/// A received packet's bytes, size and presentation time.
static inline const uint8_t *cav_packet_data(const AVPacket *pkt, int *size, int64_t *pts) {
    *size = pkt->size;
    *pts = pkt->pts;
    return pkt->data;
}

/// Releases a packet's buffer.
static inline void cav_packet_unref(AVPacket *pkt) { av_packet_unref(pkt); }

#endif
