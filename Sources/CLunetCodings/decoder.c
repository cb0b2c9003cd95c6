// Streaming decoders for a response body's content codings: gzip and deflate through zlib, br
// through brotli's decoder, zstd through zstd (libraries.c). The caller owns both buffers; a
// decoder holds only its library's state, so a body of any size decodes in bounded memory.
#include "CLunetCodings.h"
#include "libraries.h"
#include <stdlib.h>
#include <string.h>

struct lunet_decoder {
    int coding;
    int complete;     // the coded data seen so far ends at a point where it may end
    int ended;        // gzip, deflate, br: the stream's end was decoded; later bytes are ignored
    int raw_deflate;  // deflate sent without its zlib wrapper (servers do): retried as raw
    size_t fed;       // bytes handed to zlib before this step (the raw retry is only at the start)
    z_stream z;
    void *state;      // brotli's or zstd's
};

// RFC 9659 §3: a zstd Content-Encoding decoder need not take windows over 8 MB, and one that
// limits them cannot be made to hold more than that by a small hostile body.
#define LUNET_ZSTD_WINDOW_LOG_MAX 23

int lunet_codings_available(void) {
    int bits = 0;
    if (lunet_zlib()) bits |= (1 << LUNET_CODING_GZIP) | (1 << LUNET_CODING_DEFLATE);
    if (lunet_brotli()) bits |= 1 << LUNET_CODING_BR;
    if (lunet_zstd()) bits |= 1 << LUNET_CODING_ZSTD;
    return bits;
}

lunet_decoder *lunet_decoder_new(int coding) {
    lunet_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->coding = coding;
    switch (coding) {
    case LUNET_CODING_GZIP:
    case LUNET_CODING_DEFLATE: {
        const struct lunet_zlib *z = lunet_zlib();
        // 15 + 16: a gzip header and trailer; 15: a zlib wrapper (RFC 1950), as "deflate" is.
        int bits = coding == LUNET_CODING_GZIP ? 15 + 16 : 15;
        if (z && z->inflateInit2_(&d->z, bits, z->zlibVersion(), (int)sizeof d->z) == Z_OK) return d;
        break;
    }
    case LUNET_CODING_BR: {
        const struct lunet_brotli *br = lunet_brotli();
        if (br && (d->state = br->create(NULL, NULL, NULL)) != NULL) return d;
        break;
    }
    case LUNET_CODING_ZSTD: {
        const struct lunet_zstd *zs = lunet_zstd();
        if (zs && (d->state = zs->create()) != NULL) {
            d->complete = 1;   // no frame begun
            if (!zs->is_error(zs->set_parameter(d->state, LUNET_ZSTD_D_WINDOWLOGMAX, LUNET_ZSTD_WINDOW_LOG_MAX))) return d;
            zs->free(d->state);
        }
        break;
    }
    }
    free(d);
    return NULL;
}

static int step_zlib(lunet_decoder *d, const unsigned char **in, size_t *inlen, unsigned char *out, size_t cap, size_t *produced) {
    const struct lunet_zlib *z = lunet_zlib();
    const unsigned char *start = *in;
    size_t startlen = *inlen;
    for (;;) {
        d->z.next_in = (Bytef *)*in;
        d->z.avail_in = (uInt)(*inlen > 0x40000000u ? 0x40000000u : *inlen);
        d->z.next_out = out;
        d->z.avail_out = (uInt)(cap > 0x40000000u ? 0x40000000u : cap);
        uInt offered = d->z.avail_in, room = d->z.avail_out;
        int rc = z->inflate(&d->z, Z_NO_FLUSH);
        size_t used = offered - d->z.avail_in;
        *produced = room - d->z.avail_out;
        *in += used;
        *inlen -= used;
        if (rc == Z_DATA_ERROR && d->coding == LUNET_CODING_DEFLATE && !d->raw_deflate && d->fed == 0 && *produced == 0) {
            // No zlib header: raw deflate (RFC 1951), which servers send as "deflate" too.
            d->raw_deflate = 1;
            if (z->inflateReset2(&d->z, -15) != Z_OK) return LUNET_DECODE_CORRUPT;
            *in = start;
            *inlen = startlen;
            continue;
        }
        d->fed += used;
        switch (rc) {
        case Z_STREAM_END:
            d->ended = d->complete = 1;
            return LUNET_DECODE_END;
        case Z_OK:
        case Z_BUF_ERROR:   // no progress possible with what was given: more input is needed
            return LUNET_DECODE_MORE;
        case Z_MEM_ERROR:
            return LUNET_DECODE_NO_MEMORY;
        default:
            return LUNET_DECODE_CORRUPT;
        }
    }
}

static int step_brotli(lunet_decoder *d, const unsigned char **in, size_t *inlen, unsigned char *out, size_t cap, size_t *produced) {
    size_t avail_in = *inlen, avail_out = cap;
    const uint8_t *next_in = *in;
    uint8_t *next_out = out;
    int rc = lunet_brotli()->decompress_stream(d->state, &avail_in, &next_in, &avail_out, &next_out, NULL);
    *produced = cap - avail_out;
    *in = next_in;
    *inlen = avail_in;
    if (rc == LUNET_BROTLI_SUCCESS) {
        d->ended = d->complete = 1;
        return LUNET_DECODE_END;
    }
    return rc == LUNET_BROTLI_ERROR ? LUNET_DECODE_CORRUPT : LUNET_DECODE_MORE;
}

static int step_zstd(lunet_decoder *d, const unsigned char **in, size_t *inlen, unsigned char *out, size_t cap, size_t *produced) {
    const struct lunet_zstd *zs = lunet_zstd();
    lunet_zstd_in i = {*in, *inlen, 0};
    lunet_zstd_out o = {out, cap, 0};
    size_t rc = zs->decompress_stream(d->state, &o, &i);
    *produced = o.pos;
    *in += i.pos;
    *inlen -= i.pos;
    if (zs->is_error(rc)) return LUNET_DECODE_CORRUPT;
    // 0: a frame has ended and its data is all out; the next bytes, if any, start another
    // (a zstd body may hold several frames, RFC 8878 §3.1).
    if (i.pos > 0 || o.pos > 0) d->complete = rc == 0;
    return LUNET_DECODE_MORE;
}

int lunet_decoder_step(lunet_decoder *d, const unsigned char **in, size_t *inlen, unsigned char *out, size_t cap, size_t *produced) {
    *produced = 0;
    if (d->ended) return LUNET_DECODE_END;
    switch (d->coding) {
    case LUNET_CODING_GZIP:
    case LUNET_CODING_DEFLATE: return step_zlib(d, in, inlen, out, cap, produced);
    case LUNET_CODING_BR: return step_brotli(d, in, inlen, out, cap, produced);
    default: return step_zstd(d, in, inlen, out, cap, produced);
    }
}

int lunet_decoder_complete(const lunet_decoder *d) { return d->complete; }

void lunet_decoder_free(lunet_decoder *d) {
    if (!d) return;
    switch (d->coding) {
    case LUNET_CODING_GZIP:
    case LUNET_CODING_DEFLATE: lunet_zlib()->inflateEnd(&d->z); break;
    case LUNET_CODING_BR: lunet_brotli()->destroy(d->state); break;
    default: lunet_zstd()->free(d->state); break;
    }
    free(d);
}
