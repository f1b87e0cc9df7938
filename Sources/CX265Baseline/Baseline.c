#include "CX265Baseline.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <x265.h>

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

/// Appends one x265_encoder_encode call's NAL units to `out`.
static int append_output(const x265_nal *nals, uint32_t count, uint8_t *out, long capacity, long *used) {
    for (uint32_t i = 0; i < count; i++) {
        if (*used + (long)nals[i].sizeBytes > capacity) return -1;
        memcpy(out + *used, nals[i].payload, nals[i].sizeBytes);
        *used += nals[i].sizeBytes;
    }
    return 0;
}

long cx265_baseline_encode(const cx265_baseline_settings *s, const uint8_t *const *frames, int frame_count,
                           uint8_t *out, long out_capacity, double *encode_seconds, double *process_seconds) {
    const x265_api *api = x265_api_get(s->bit_depth);
    if (api == NULL) return -1;
    x265_param *param = api->param_alloc();
    if (param == NULL) return -1;
    if (api->param_default_preset(param, s->preset, s->tune) < 0) { api->param_free(param); return -1; }
    param->logLevel = X265_LOG_WARNING;
    param->sourceWidth = s->width;
    param->sourceHeight = s->height;
    param->internalCsp = X265_CSP_I420;
    param->fpsNum = s->fps_num;
    param->fpsDenom = s->fps_den;
    param->bAnnexB = 0;
    param->bRepeatHeaders = 0;
    param->bEnableAccessUnitDelimiters = 0;
    param->bEmitInfoSEI = 0;
    if (s->threads > 0) {
        char pools[16];
        snprintf(pools, sizeof pools, "%d", s->threads);
        api->param_parse(param, "pools", pools);
    }
    if (s->keyint_max > 0) {
        param->keyframeMax = s->keyint_max;
        if (param->keyframeMin > s->keyint_max) param->keyframeMin = s->keyint_max;
    }
    if (s->no_bframes) param->bframes = 0;
    param->rc.rateControlMode = X265_RC_CRF;
    param->rc.rfConstant = s->crf;
    if (s->vbv_max_kbps > 0) param->rc.vbvMaxBitrate = s->vbv_max_kbps;
    if (s->vbv_buffer_kbit > 0) param->rc.vbvBufferSize = s->vbv_buffer_kbit;
    if (api->param_apply_profile(param, s->profile) < 0) { api->param_free(param); return -1; }

    x265_encoder *encoder = api->encoder_open(param);
    if (encoder == NULL) { api->param_free(param); return -1; }
    x265_nal *nals;
    uint32_t count;
    api->encoder_headers(encoder, &nals, &count);   // as the session's prepare does

    long used = 0;
    int failed = 0;
    const int sample = s->bit_depth > 8 ? 2 : 1;
    const long luma = (long)s->width * s->height * sample;
    double process_start = process_cpu_seconds();
    double start = now_seconds();
    for (int i = 0; i < frame_count && !failed; i++) {
        x265_picture pic, pic_out;
        api->picture_init(param, &pic);
        api->picture_init(param, &pic_out);
        pic.pts = i;
        pic.bitDepth = s->bit_depth;
        pic.colorSpace = X265_CSP_I420;
        pic.planes[0] = (void *)frames[i];
        pic.planes[1] = (void *)(frames[i] + luma);
        pic.planes[2] = (void *)(frames[i] + luma + luma / 4);
        pic.stride[0] = s->width * sample;
        pic.stride[1] = s->width / 2 * sample;
        pic.stride[2] = s->width / 2 * sample;
        int status = api->encoder_encode(encoder, &nals, &count, &pic, &pic_out);
        if (status < 0 || append_output(nals, status > 0 ? count : 0, out, out_capacity, &used) < 0) failed = 1;
    }
    for (;;) {
        if (failed) break;
        x265_picture pic_out;
        api->picture_init(param, &pic_out);
        int status = api->encoder_encode(encoder, &nals, &count, NULL, &pic_out);
        if (status < 0 || append_output(nals, status > 0 ? count : 0, out, out_capacity, &used) < 0) failed = 1;
        if (status <= 0) break;
    }
    if (encode_seconds != NULL) *encode_seconds = now_seconds() - start;
    if (process_seconds != NULL) *process_seconds = process_cpu_seconds() - process_start;
    api->encoder_close(encoder);
    api->param_free(param);
    return failed ? -1 : used;
}
