#ifndef CX264_H
#define CX264_H
// C at the edge: the only C that swift-h264 touches. Everything here is a `static inline`
// shim with a `cx264_` prefix, so Swift never sees x264's macros or varargs.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

// A missing system library is named here, at compile time, with the package that provides it:
// otherwise a consumer would meet only a bare "cannot find -lyuv" from the linker, because
// Debian's libyuv-dev ships no pkg-config file for SwiftPM to look for.
#if defined(__has_include)
#if !__has_include(<x264.h>)
#error "swift-h264 needs libx264: install it with 'apt-get install libx264-dev' (Debian, Ubuntu) or 'brew install x264'"
#endif
#if !__has_include(<libyuv/convert.h>)
#error "swift-h264 needs libyuv: install it with 'apt-get install libyuv-dev' (Debian, Ubuntu) or 'brew install libyuv'"
#endif
#endif
#include <x264.h>

/// x264_encoder_open is a macro (x264_encoder_open_<build>); Swift calls this shim.
static inline x264_t *cx264_encoder_open(x264_param_t *param) {
    return x264_encoder_open(param);
}

/// A log sink: receives x264's formatted log lines (no trailing newline handling).
typedef void (*cx264_log_sink)(void *context, int level, const char *message);

/// What `p_log_private` points at when the trampoline below is installed.
typedef struct cx264_log_target {
    cx264_log_sink sink;
    void *context;
} cx264_log_target;

/// x264's `pf_log` takes a format and a va_list, which Swift cannot format: this trampoline
/// formats the line and hands it to the Swift sink.
static inline void cx264_log_trampoline(void *priv, int level, const char *format, va_list args) {
    cx264_log_target *target = (cx264_log_target *)priv;
    if (target == NULL || target->sink == NULL) return;
    char line[1024];
    vsnprintf(line, sizeof line, format, args);
    target->sink(target->context, level, line);
}

/// Routes the log lines of encoders opened with `param` to `target` (which must outlive them).
static inline void cx264_param_set_log(x264_param_t *param, cx264_log_target *target, int level) {
    param->pf_log = cx264_log_trampoline;
    param->p_log_private = target;
    param->i_log_level = level;
}

/// The picture type constants as functions (macros do not always import).
static inline int cx264_type_idr(void) { return X264_TYPE_IDR; }

/// libyuv's ARGBToI420 (libyuv-dev; `libyuv/convert.h`). libyuv's "ARGB" is B, G, R, A in
/// memory on little-endian machines — what Apple calls BGRA. Declared here rather than
/// including <libyuv.h>, whose umbrella pulls in C++-only headers.
int ARGBToI420(const uint8_t *src_argb, int src_stride_argb,
               uint8_t *dst_y, int dst_stride_y,
               uint8_t *dst_u, int dst_stride_u,
               uint8_t *dst_v, int dst_stride_v,
               int width, int height);

static inline int cx264_bgra_to_i420(const uint8_t *bgra, int bgra_stride,
                                     uint8_t *y, int y_stride, uint8_t *u, int u_stride,
                                     uint8_t *v, int v_stride, int width, int height) {
    return ARGBToI420(bgra, bgra_stride, y, y_stride, u, u_stride, v, v_stride, width, height);
}

/// libyuv's NV12ToI420 (`libyuv/convert.h`), declared here for the same reason as ARGBToI420.
int NV12ToI420(const uint8_t *src_y, int src_stride_y, const uint8_t *src_uv, int src_stride_uv,
               uint8_t *dst_y, int dst_stride_y, uint8_t *dst_u, int dst_stride_u,
               uint8_t *dst_v, int dst_stride_v, int width, int height);

static inline int cx264_nv12_to_i420(const uint8_t *y, int y_stride, const uint8_t *uv, int uv_stride,
                                     uint8_t *dst_y, uint8_t *dst_u, uint8_t *dst_v, int width, int height) {
    return NV12ToI420(y, y_stride, uv, uv_stride, dst_y, width, dst_u, width / 2, dst_v, width / 2, width, height);
}

/// libyuv's I420Scale (`libyuv/scale.h`) with its box filter (`kFilterBox` = 3), declared here
/// for the same reason as ARGBToI420.
int I420Scale(const uint8_t *src_y, int src_stride_y, const uint8_t *src_u, int src_stride_u,
              const uint8_t *src_v, int src_stride_v, int src_width, int src_height,
              uint8_t *dst_y, int dst_stride_y, uint8_t *dst_u, int dst_stride_u,
              uint8_t *dst_v, int dst_stride_v, int dst_width, int dst_height, int filtering);

static inline int cx264_i420_scale(const uint8_t *src_y, int src_stride_y, const uint8_t *src_u, int src_stride_u,
                                   const uint8_t *src_v, int src_stride_v, int src_width, int src_height,
                                   uint8_t *dst_y, uint8_t *dst_u, uint8_t *dst_v, int dst_width, int dst_height) {
    return I420Scale(src_y, src_stride_y, src_u, src_stride_u, src_v, src_stride_v, src_width, src_height,
                     dst_y, dst_width, dst_u, (dst_width + 1) / 2, dst_v, (dst_width + 1) / 2,
                     dst_width, dst_height, 3);
}
#endif
