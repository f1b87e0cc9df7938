#ifndef CX265_H
#define CX265_H
// C at the edge: the only C of libx265 that swift-h264 touches. Everything here is a
// `static inline` shim with a `cx265_` prefix, so Swift never sees x265's versioned macros.
// Only built with the package trait HEVCEncoding (the default).
#include <stdint.h>

// A missing libx265 is named here, at compile time, with the package that provides it.
#if defined(__has_include)
#if !__has_include(<x265.h>)
#error "swift-h264's HEVCEncoding trait needs libx265: install it with 'apt-get install libx265-dev' (Debian, Ubuntu) or 'brew install x265', or build without the trait (traits: [])"
#endif
#endif
#include <x265.h>

/// The API of the libx265 build for `bit_depth` (8, 10 or 12; 0 for the default build), NULL
/// when the installed library was built without it. `x265_api_get` is a macro
/// (`x265_api_get_<build>`); Swift calls this shim. Every other x265 call goes through the
/// returned table, so 8-bit and 10-bit encoders can run in one process.
static inline const x265_api *cx265_api_get(int bit_depth) {
    return x265_api_get(bit_depth);
}

/// The constants Swift needs, as functions (macros do not always import).
static inline int cx265_type_idr(void) { return X265_TYPE_IDR; }
static inline int cx265_type_auto(void) { return X265_TYPE_AUTO; }
static inline int cx265_csp_i420(void) { return X265_CSP_I420; }
static inline int cx265_rc_abr(void) { return X265_RC_ABR; }
static inline int cx265_rc_crf(void) { return X265_RC_CRF; }
#endif
