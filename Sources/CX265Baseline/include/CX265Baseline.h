// Used only by the H264Benchmarks test target (hevc_encoder_vs_c): a plain C loop over
// libx265, the baseline EncoderSession's H.265 path is measured against.
#ifndef CX265BASELINE_H
#define CX265BASELINE_H

#include <stdint.h>

/// The x265 parameters of a baseline run: what H264Encoder's session sets, spelled out.
typedef struct cx265_baseline_settings {
    int width, height;
    int bit_depth;         /// x265_api_get: 8 (Main) or 10 (Main 10); frames carry this depth
    const char *preset;    /// x265_param_default_preset
    const char *tune;      /// or NULL
    const char *profile;   /// x265_param_apply_profile ("main", "main10")
    int threads;           /// "pools"; 0 = x265's automatic choice
    double crf;            /// rc.rfConstant with X265_RC_CRF
    int vbv_max_kbps;      /// rc.vbvMaxBitrate (0 = none)
    int vbv_buffer_kbit;   /// rc.vbvBufferSize (0 = none)
    int keyint_max;        /// keyframeMax (0 = x265's default)
    int no_bframes;        /// bframes = 0
    uint32_t fps_num, fps_den;
} cx265_baseline_settings;

/// Opens x265 (untimed), then encodes `frame_count` planar 4:2:0 frames — each `frames[i]` holds
/// Y, U and V planes back to back (8-bit samples, or 16-bit little-endian ones for bit_depth
/// 10) — and flushes delayed frames: the timed part (the session's `encode` × N +
/// `completeFrames()`), whose wall seconds go to `*encode_seconds` and whose process CPU seconds
/// (CLOCK_PROCESS_CPUTIME_ID: every thread, x265's pool included) to `*process_seconds` (unless
/// NULL); then closes x265 (untimed, as the session's `invalidate()`). Every frame's NAL units (4-byte lengths, bAnnexB = 0) are copied to `out`
/// (capacity `out_capacity`).
///
/// Returns the number of output bytes, or -1 when x265 fails or `out` is too small.
long cx265_baseline_encode(const cx265_baseline_settings *settings, const uint8_t *const *frames, int frame_count,
                           uint8_t *out, long out_capacity, double *encode_seconds, double *process_seconds);

#endif
