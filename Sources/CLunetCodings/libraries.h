// The compression libraries, opened with dlopen on first use (libraries.c): every call goes
// through a pointer found with dlsym. zlib.h gives the z_stream layout; brotli's and zstd's few
// declarations are written here from their documented APIs (their -dev packages need not be
// installed to build lunet).
#ifndef CLUNET_CODINGS_LIBRARIES_H
#define CLUNET_CODINGS_LIBRARIES_H
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

struct lunet_zlib {
    int (*deflateInit2_)(z_streamp, int, int, int, int, int, const char *, int);
    int (*deflate)(z_streamp, int);
    int (*deflateEnd)(z_streamp);
    int (*inflateInit2_)(z_streamp, int, const char *, int);
    int (*inflate)(z_streamp, int);
    int (*inflateEnd)(z_streamp);
    int (*inflateReset2)(z_streamp, int);
    const char *(*zlibVersion)(void);
};

// BrotliDecoderResult: 0 error, 1 success, 2 needs more input, 3 needs more output.
enum { LUNET_BROTLI_ERROR = 0, LUNET_BROTLI_SUCCESS = 1, LUNET_BROTLI_NEEDS_INPUT = 2, LUNET_BROTLI_NEEDS_OUTPUT = 3 };
struct lunet_brotli {
    void *(*create)(void *alloc, void *free, void *opaque);
    int (*decompress_stream)(void *state, size_t *avail_in, const uint8_t **next_in, size_t *avail_out, uint8_t **next_out, size_t *total_out);
    void (*destroy)(void *state);
};

// ZSTD_inBuffer and ZSTD_outBuffer, as zstd.h lays them out.
typedef struct { const void *src; size_t size; size_t pos; } lunet_zstd_in;
typedef struct { void *dst; size_t size; size_t pos; } lunet_zstd_out;
// ZSTD_d_windowLogMax, a ZSTD_dParameter.
enum { LUNET_ZSTD_D_WINDOWLOGMAX = 100 };
struct lunet_zstd {
    void *(*create)(void);
    size_t (*free)(void *);
    size_t (*decompress_stream)(void *, lunet_zstd_out *, lunet_zstd_in *);
    unsigned (*is_error)(size_t);
    size_t (*set_parameter)(void *, int, int);
};

/// Each library, opened once per process; NULL when it cannot be (or lacks a function).
const struct lunet_zlib *lunet_zlib(void);
const struct lunet_brotli *lunet_brotli(void);
const struct lunet_zstd *lunet_zstd(void);

#endif
