#ifndef CX264_H
#define CX264_H
#include <stdint.h>
#include <x264.h>

/// x264_encoder_open is a macro (x264_encoder_open_<build>); Swift calls this shim.
static inline x264_t *cx264_encoder_open(x264_param_t *param) {
    return x264_encoder_open(param);
}
#endif
