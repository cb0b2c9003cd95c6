// gzip (RFC 1952) through the system's zlib, opened with dlopen on first use as libcurl and
// readline are: libz.so.1 is there wherever libcurl is (it links it), and a program that never
// compresses never loads anything. zlib.h gives the z_stream layout only; every call goes
// through a pointer found with dlsym. gRPC's "gzip" message encoding uses it (lua/lunet/grpc).
#include "CLunetLinux.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static struct {
    int (*deflateInit2_)(z_streamp, int, int, int, int, int, const char *, int);
    int (*deflate)(z_streamp, int);
    int (*deflateEnd)(z_streamp);
    int (*inflateInit2_)(z_streamp, int, const char *, int);
    int (*inflate)(z_streamp, int);
    int (*inflateEnd)(z_streamp);
    const char *(*zlibVersion)(void);
    int ready;
} z;
static pthread_once_t z_once = PTHREAD_ONCE_INIT;

static void z_load(void) {
    void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    z.deflateInit2_ = (int (*)(z_streamp, int, int, int, int, int, const char *, int))dlsym(lib, "deflateInit2_");
    z.deflate = (int (*)(z_streamp, int))dlsym(lib, "deflate");
    z.deflateEnd = (int (*)(z_streamp))dlsym(lib, "deflateEnd");
    z.inflateInit2_ = (int (*)(z_streamp, int, const char *, int))dlsym(lib, "inflateInit2_");
    z.inflate = (int (*)(z_streamp, int))dlsym(lib, "inflate");
    z.inflateEnd = (int (*)(z_streamp))dlsym(lib, "inflateEnd");
    z.zlibVersion = (const char *(*)(void))dlsym(lib, "zlibVersion");
    z.ready = z.deflateInit2_ && z.deflate && z.deflateEnd && z.inflateInit2_ && z.inflate && z.inflateEnd && z.zlibVersion;
}

// Grows *buf (capacity *cap) to hold at least `need` bytes; 0, or -1 out of memory.
static int grow(unsigned char **buf, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 256;
    while (n < need) n *= 2;
    unsigned char *p = realloc(*buf, n);
    if (!p) return -1;
    *buf = p;
    *cap = n;
    return 0;
}

int lunet_gzip(const void *in, size_t n, void **out, size_t *outlen) {
    pthread_once(&z_once, z_load);
    if (!z.ready) return LUNET_GZIP_NO_ZLIB;
    z_stream s;
    memset(&s, 0, sizeof s);
    // 15 + 16: a gzip header and trailer around the deflate stream.
    if (z.deflateInit2_(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, z.zlibVersion(), (int)sizeof s) != Z_OK)
        return LUNET_GZIP_CORRUPT;
    unsigned char *buf = NULL;
    size_t cap = 0, used = 0;
    s.next_in = (unsigned char *)in;
    s.avail_in = (uInt)n;
    int rc;
    do {
        if (grow(&buf, &cap, used + 65536) != 0) { z.deflateEnd(&s); free(buf); return LUNET_GZIP_NO_MEMORY; }
        s.next_out = buf + used;
        s.avail_out = (uInt)(cap - used);
        rc = z.deflate(&s, Z_FINISH);
        used = cap - s.avail_out;
    } while (rc == Z_OK || rc == Z_BUF_ERROR);
    z.deflateEnd(&s);
    if (rc != Z_STREAM_END) { free(buf); return LUNET_GZIP_CORRUPT; }
    *out = buf;
    *outlen = used;
    return LUNET_GZIP_OK;
}

int lunet_gunzip(const void *in, size_t n, size_t max, void **out, size_t *outlen) {
    pthread_once(&z_once, z_load);
    if (!z.ready) return LUNET_GZIP_NO_ZLIB;
    z_stream s;
    memset(&s, 0, sizeof s);
    if (z.inflateInit2_(&s, 15 + 16, z.zlibVersion(), (int)sizeof s) != Z_OK) return LUNET_GZIP_CORRUPT;
    unsigned char *buf = NULL;
    size_t cap = 0, used = 0;
    s.next_in = (unsigned char *)in;
    s.avail_in = (uInt)n;
    int rc;
    do {
        // Never more than max + 1 bytes out: one past the limit says it was crossed.
        size_t want = used + 65536 > max + 1 ? max + 1 : used + 65536;
        if (want <= used) { z.inflateEnd(&s); free(buf); return LUNET_GZIP_TOO_LARGE; }
        if (grow(&buf, &cap, want) != 0) { z.inflateEnd(&s); free(buf); return LUNET_GZIP_NO_MEMORY; }
        s.next_out = buf + used;
        s.avail_out = (uInt)(want - used);
        rc = z.inflate(&s, Z_NO_FLUSH);
        used = want - s.avail_out;
        if (used > max) { z.inflateEnd(&s); free(buf); return LUNET_GZIP_TOO_LARGE; }
    } while (rc == Z_OK && (s.avail_in > 0 || s.avail_out == 0));
    z.inflateEnd(&s);
    if (rc != Z_STREAM_END || s.avail_in != 0) { free(buf); return LUNET_GZIP_CORRUPT; }
    *out = buf;
    *outlen = used;
    return LUNET_GZIP_OK;
}
