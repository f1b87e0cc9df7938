// Used only by the H264Benchmarks test target: a plain C loop over libavcodec, the baseline
// H264Decoder's session is measured against.
#ifndef CAVCODECBASELINE_H
#define CAVCODECBASELINE_H

#include <stdint.h>

/// Opens libavcodec's H.264 decoder (`threads`: 0 = automatic; `low_delay`: slice threads only
/// and AV_CODEC_FLAG_LOW_DELAY; `reorder_depth`: `has_b_frames` to start with), sends `count`
/// Annex-B packets (`packets[i]`, `sizes[i]` bytes; each copied into a padded packet, as a
/// demuxer would), receives every frame after each, drains, and closes. The seconds from open to
/// drained go to `*seconds`. With `checksum` non-NULL, the sum of every output frame's luma
/// samples (8-bit) goes there. Returns the number of frames, or a negative AVERROR.
long cav_baseline_decode(const uint8_t *const *packets, const int *sizes, int count, int threads,
                         int low_delay, int reorder_depth, uint64_t *checksum, double *seconds);

#endif
