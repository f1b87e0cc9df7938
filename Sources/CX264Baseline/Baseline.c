#if defined(__linux__)
#define _GNU_SOURCE
#include <malloc.h>
#endif
#include "CX264Baseline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x264.h>

void cx264_baseline_keep_freed_memory(void) {
#if defined(__linux__)
    mallopt(M_MMAP_MAX, 0);             // large blocks from the heap, not from mmap …
    mallopt(M_TRIM_THRESHOLD, 1 << 30); // … and the heap not given back when they are freed
#endif
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double process_cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double thread_cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/// Appends one x264_encoder_encode call's output (payloads are back to back) to `out`.
static int append_output(x264_nal_t *nals, int size, uint8_t *out, long capacity, long *used) {
    if (size <= 0) return 0;
    if (*used + size > capacity) return -1;
    memcpy(out + *used, nals[0].p_payload, (size_t)size);
    *used += size;
    return 0;
}

long cx264_baseline_encode(const cx264_baseline_settings *s, const uint8_t *const *frames, int frame_count,
                           uint8_t *out, long out_capacity, double *encode_seconds, double *cpu_seconds,
                           double *process_seconds) {
    x264_param_t param;
    if (x264_param_default_preset(&param, s->preset, s->tune) < 0) return -1;
    param.i_log_level = X264_LOG_WARNING;
    param.i_width = s->width;
    param.i_height = s->height;
    param.i_csp = X264_CSP_I420;
    param.i_fps_num = s->fps_num;
    param.i_fps_den = s->fps_den;
    param.i_timebase_num = s->fps_den;
    param.i_timebase_den = s->fps_num;
    param.b_vfr_input = 0;
    param.b_annexb = 0;
    param.b_repeat_headers = 0;
    param.b_aud = 0;
    if (s->threads > 0) param.i_threads = s->threads;
    if (s->keyint_max > 0) {
        param.i_keyint_max = s->keyint_max;
        if (param.i_keyint_min > s->keyint_max) param.i_keyint_min = s->keyint_max;
    }
    if (s->no_bframes) param.i_bframe = 0;
    param.rc.i_rc_method = X264_RC_CRF;
    param.rc.f_rf_constant = s->crf;
    if (s->vbv_max_kbps > 0) param.rc.i_vbv_max_bitrate = s->vbv_max_kbps;
    if (s->vbv_buffer_kbit > 0) param.rc.i_vbv_buffer_size = s->vbv_buffer_kbit;
    if (x264_param_apply_profile(&param, s->profile) < 0) return -1;

    uint8_t *scratch = NULL;
    if (out == NULL) {
        scratch = malloc((size_t)out_capacity);
        if (scratch == NULL) return -1;
        out = scratch;
    }
    x264_t *encoder = x264_encoder_open(&param);
    if (encoder == NULL) { free(scratch); return -1; }

    long used = 0;
    int failed = 0;
    const int luma = s->width * s->height;
    double process_start = process_cpu_seconds();
    double start = now_seconds();
    double cpu_first = 0, cpu_last = 0;
    for (int i = 0; i < frame_count && !failed; i++) {
        x264_picture_t pic, pic_out;
        x264_picture_init(&pic);
        pic.i_pts = i;
        pic.img.i_csp = X264_CSP_I420;
        pic.img.i_plane = 3;
        pic.img.plane[0] = (uint8_t *)frames[i];
        pic.img.plane[1] = (uint8_t *)frames[i] + luma;
        pic.img.plane[2] = (uint8_t *)frames[i] + luma + luma / 4;
        pic.img.i_stride[0] = s->width;
        pic.img.i_stride[1] = s->width / 2;
        pic.img.i_stride[2] = s->width / 2;
        x264_nal_t *nals;
        int count;
        int size = x264_encoder_encode(encoder, &nals, &count, &pic, &pic_out);
        if (size < 0 || append_output(nals, size, out, out_capacity, &used) < 0) failed = 1;
        if (i == 0) cpu_first = thread_cpu_seconds();
        if (i == frame_count - 1) cpu_last = thread_cpu_seconds();
    }
    while (!failed && x264_encoder_delayed_frames(encoder) > 0) {
        x264_picture_t pic_out;
        x264_nal_t *nals;
        int count;
        int size = x264_encoder_encode(encoder, &nals, &count, NULL, &pic_out);
        if (size < 0 || append_output(nals, size, out, out_capacity, &used) < 0) failed = 1;
    }
    if (encode_seconds != NULL) *encode_seconds = now_seconds() - start;
    if (process_seconds != NULL) *process_seconds = process_cpu_seconds() - process_start;
    x264_encoder_close(encoder);
    if (cpu_seconds != NULL) *cpu_seconds = cpu_last - cpu_first;
    free(scratch);
    return failed ? -1 : used;
}

#if defined(__linux__)
#include <sched.h>
#include <errno.h>

int cx264_baseline_set_affinity(int tid, const int *cpus, int count) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++) CPU_SET(cpus[i], &set);
    return sched_setaffinity((pid_t)tid, sizeof set, &set);
}

int cx264_baseline_get_affinity(int tid, int *cpus, int capacity) {
    cpu_set_t set;
    if (sched_getaffinity((pid_t)tid, sizeof set, &set) != 0) return -1;
    int count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && count < capacity; cpu++) {
        if (CPU_ISSET(cpu, &set)) cpus[count++] = cpu;
    }
    return count;
}
#else
int cx264_baseline_set_affinity(int tid, const int *cpus, int count) { (void)tid; (void)cpus; (void)count; return -1; }
int cx264_baseline_get_affinity(int tid, int *cpus, int capacity) { (void)tid; (void)cpus; (void)capacity; return -1; }
#endif
