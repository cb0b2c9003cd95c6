// Snappy's block format through the system's libsnappy (libsnappy.so.1, Debian's libsnappy1v5),
// opened with dlopen on first use as zlib is: Prometheus remote write sends its protobuf
// snappy-compressed (lua/lunet/load/prometheus.lua). Only a run that writes to Prometheus loads
// it. The few declarations are snappy-c.h's documented C API.
#include "CLunetCodings.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

struct lunet_snappy_lib {
    int (*compress)(const char *, size_t, char *, size_t *);
    int (*uncompress)(const char *, size_t, char *, size_t *);
    size_t (*max_compressed_length)(size_t);
    int (*uncompressed_length)(const char *, size_t, size_t *);
};

static struct lunet_snappy_lib sn;
static int sn_ready;
static pthread_once_t sn_once = PTHREAD_ONCE_INIT;

static void sn_load(void) {
    void *lib = dlopen("libsnappy.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    sn.compress = (int (*)(const char *, size_t, char *, size_t *))dlsym(lib, "snappy_compress");
    sn.uncompress = (int (*)(const char *, size_t, char *, size_t *))dlsym(lib, "snappy_uncompress");
    sn.max_compressed_length = (size_t (*)(size_t))dlsym(lib, "snappy_max_compressed_length");
    sn.uncompressed_length = (int (*)(const char *, size_t, size_t *))dlsym(lib, "snappy_uncompressed_length");
    sn_ready = sn.compress && sn.uncompress && sn.max_compressed_length && sn.uncompressed_length;
}

static const struct lunet_snappy_lib *snappy(void) {
    pthread_once(&sn_once, sn_load);
    return sn_ready ? &sn : NULL;
}

int lunet_snappy_compress(const void *in, size_t n, void **out, size_t *outlen) {
    const struct lunet_snappy_lib *s = snappy();
    if (!s) return LUNET_SNAPPY_NO_LIBRARY;
    size_t cap = s->max_compressed_length(n);
    char *buf = malloc(cap ? cap : 1);
    if (!buf) return LUNET_SNAPPY_NO_MEMORY;
    *outlen = cap;
    if (s->compress(in, n, buf, outlen) != 0) { free(buf); return LUNET_SNAPPY_CORRUPT; }
    *out = buf;
    return LUNET_SNAPPY_OK;
}

int lunet_snappy_uncompress(const void *in, size_t n, size_t max, void **out, size_t *outlen) {
    const struct lunet_snappy_lib *s = snappy();
    if (!s) return LUNET_SNAPPY_NO_LIBRARY;
    size_t length = 0;
    // The block's header says its length: checked against `max` before anything is held.
    if (s->uncompressed_length(in, n, &length) != 0) return LUNET_SNAPPY_CORRUPT;
    if (length > max) return LUNET_SNAPPY_TOO_LARGE;
    char *buf = malloc(length ? length : 1);
    if (!buf) return LUNET_SNAPPY_NO_MEMORY;
    *outlen = length;
    if (s->uncompress(in, n, buf, outlen) != 0) { free(buf); return LUNET_SNAPPY_CORRUPT; }
    *out = buf;
    return LUNET_SNAPPY_OK;
}
