// Used only by the H264Benchmarks test target: the baselines the Swift code is measured
// against, written in plain C.
#ifndef CX264BASELINE_H
#define CX264BASELINE_H

#include <stdint.h>

/// Makes glibc keep freed memory in the process (mallopt M_MMAP_MAX / M_TRIM_THRESHOLD), so
/// that a large buffer freed by one benchmark run is reused by the next rather than unmapped
/// and faulted in again. Does nothing elsewhere.
void cx264_baseline_keep_freed_memory(void);

/// The x264 parameters of a baseline run: what H264Encoder's session sets, spelled out.
typedef struct cx264_baseline_settings {
    int width, height;
    const char *preset;   /// x264_param_default_preset
    const char *tune;     /// or NULL
    const char *profile;  /// x264_param_apply_profile
    int threads;          /// i_threads; 0 = x264's automatic choice
    float crf;            /// rc.f_rf_constant with X264_RC_CRF
    int vbv_max_kbps;     /// rc.i_vbv_max_bitrate (0 = none)
    int vbv_buffer_kbit;  /// rc.i_vbv_buffer_size (0 = none)
    int keyint_max;       /// i_keyint_max (0 = x264's default)
    int no_bframes;       /// i_bframe = 0
    uint32_t fps_num, fps_den;
} cx264_baseline_settings;

/// Opens x264 (untimed), then encodes `frame_count` I420 frames — each `frames[i]` holds
/// Y, U and V planes back to back, width × height and two (width/2) × (height/2) planes —
/// and flushes delayed frames: the timed part (what the session's `encode` × N +
/// `completeFrames()` do), whose wall seconds go to `*encode_seconds` and whose process CPU
/// seconds (CLOCK_PROCESS_CPUTIME_ID: every thread, x264's own included) to `*process_seconds`
/// (unless NULL); then closes x264 (untimed, as the session's `invalidate()`). Every frame's NAL units (4-byte lengths, as x264 writes with
/// b_annexb = 0) are copied to `out` (capacity `out_capacity`; NULL to copy into a scratch
/// buffer of the same size instead). `*cpu_seconds` (unless NULL) gets the calling thread's CPU
/// time (CLOCK_THREAD_CPUTIME_ID) from after the first frame's output was copied to after the
/// last frame's: frames 2…frame_count, what the session's benchmark reads on its encoding thread.
///
/// Returns the number of output bytes, or -1 when x264 fails or `out` is too small.
long cx264_baseline_encode(const cx264_baseline_settings *settings, const uint8_t *const *frames, int frame_count,
                           uint8_t *out, long out_capacity, double *encode_seconds, double *cpu_seconds,
                           double *process_seconds);

/// Lets thread `tid` (a Linux thread id; 0: the caller) run only on the `count` CPUs in `cpus`
/// (sched_setaffinity). Returns 0, or -1 with errno set (and -1 off Linux).
int cx264_baseline_set_affinity(int tid, const int *cpus, int count);

/// Writes the CPUs thread `tid` (0: the caller) may run on to `cpus` (at most `capacity`,
/// ascending; sched_getaffinity). Returns how many, or -1 with errno set (and -1 off Linux).
int cx264_baseline_get_affinity(int tid, int *cpus, int capacity);

#endif
