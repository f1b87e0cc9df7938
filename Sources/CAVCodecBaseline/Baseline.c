#include "CAVCodecBaseline.h"
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <string.h>
#include <time.h>

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void consume(const AVFrame *frame, uint64_t *checksum) {
    if (checksum == NULL) return;
    for (int y = 0; y < frame->height; y++) {
        const uint8_t *row = frame->data[0] + (ptrdiff_t)y * frame->linesize[0];
        for (int x = 0; x < frame->width; x++) *checksum += row[x];
    }
}

long cav_baseline_decode(const uint8_t *const *packets, const int *sizes, int count, int threads,
                         int low_delay, int reorder_depth, uint64_t *checksum, double *seconds) {
    double start = now_seconds();
    const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_H264);
    AVCodecContext *ctx = avcodec_alloc_context3(codec);
    if (ctx == NULL) return AVERROR(ENOMEM);
    ctx->thread_count = threads;
    ctx->thread_type = low_delay ? FF_THREAD_SLICE : (FF_THREAD_FRAME | FF_THREAD_SLICE);
    if (low_delay) ctx->flags |= AV_CODEC_FLAG_LOW_DELAY;
    ctx->has_b_frames = reorder_depth;
    int status = avcodec_open2(ctx, codec, NULL);
    if (status < 0) { avcodec_free_context(&ctx); return status; }
    AVPacket *pkt = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    long frames = 0;
    if (checksum) *checksum = 0;
    for (int i = 0; i <= count; i++) {
        if (i < count) {
            if (av_new_packet(pkt, sizes[i]) < 0) { frames = AVERROR(ENOMEM); break; }
            memcpy(pkt->data, packets[i], (size_t)sizes[i]);
            pkt->pts = i;
            status = avcodec_send_packet(ctx, pkt);
            av_packet_unref(pkt);
        } else {
            status = avcodec_send_packet(ctx, NULL);
        }
        if (status < 0 && status != AVERROR_INVALIDDATA) { frames = status; break; }
        while ((status = avcodec_receive_frame(ctx, frame)) >= 0) {
            consume(frame, checksum);
            frames++;
            av_frame_unref(frame);
        }
        if (status != AVERROR(EAGAIN) && status != AVERROR_EOF) { frames = status; break; }
    }
    *seconds = now_seconds() - start;
    av_frame_free(&frame);
    av_packet_free(&pkt);
    avcodec_free_context(&ctx);
    return frames;
}
