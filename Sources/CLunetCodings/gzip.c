// gzip (RFC 1952) of a whole buffer, both ways, through the system's zlib (libraries.c). gRPC's
// "gzip" message encoding uses it (lua/lunet/grpc); response bodies are decoded as they arrive
// by decoder.c instead.
#include "CLunetCodings.h"
#include "libraries.h"
#include <stdlib.h>
#include <string.h>

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
    const struct lunet_zlib *zp = lunet_zlib();
    if (!zp) return LUNET_GZIP_NO_ZLIB;
    const struct lunet_zlib z = *zp;
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
    const struct lunet_zlib *zp = lunet_zlib();
    if (!zp) return LUNET_GZIP_NO_ZLIB;
    const struct lunet_zlib z = *zp;
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
