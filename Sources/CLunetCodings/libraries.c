// Opens zlib, brotli's decoder and zstd on first use (libraries.h). A program that never meets
// a coding never loads its library; one that does pays a dlopen of a library libcurl has
// usually loaded already.
#include "libraries.h"
#include <dlfcn.h>
#include <pthread.h>

static struct lunet_zlib z;
static int z_ready;
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
    z.inflateReset2 = (int (*)(z_streamp, int))dlsym(lib, "inflateReset2");
    z.zlibVersion = (const char *(*)(void))dlsym(lib, "zlibVersion");
    z_ready = z.deflateInit2_ && z.deflate && z.deflateEnd && z.inflateInit2_ && z.inflate && z.inflateEnd
        && z.inflateReset2 && z.zlibVersion;
}

const struct lunet_zlib *lunet_zlib(void) {
    pthread_once(&z_once, z_load);
    return z_ready ? &z : NULL;
}

static struct lunet_brotli br;
static int br_ready;
static pthread_once_t br_once = PTHREAD_ONCE_INIT;

static void br_load(void) {
    void *lib = dlopen("libbrotlidec.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    br.create = (void *(*)(void *, void *, void *))dlsym(lib, "BrotliDecoderCreateInstance");
    br.decompress_stream = (int (*)(void *, size_t *, const uint8_t **, size_t *, uint8_t **, size_t *))dlsym(lib, "BrotliDecoderDecompressStream");
    br.destroy = (void (*)(void *))dlsym(lib, "BrotliDecoderDestroyInstance");
    br_ready = br.create && br.decompress_stream && br.destroy;
}

const struct lunet_brotli *lunet_brotli(void) {
    pthread_once(&br_once, br_load);
    return br_ready ? &br : NULL;
}

static struct lunet_zstd zs;
static int zs_ready;
static pthread_once_t zs_once = PTHREAD_ONCE_INIT;

static void zs_load(void) {
    void *lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    zs.create = (void *(*)(void))dlsym(lib, "ZSTD_createDStream");
    zs.free = (size_t (*)(void *))dlsym(lib, "ZSTD_freeDStream");
    zs.decompress_stream = (size_t (*)(void *, lunet_zstd_out *, lunet_zstd_in *))dlsym(lib, "ZSTD_decompressStream");
    zs.is_error = (unsigned (*)(size_t))dlsym(lib, "ZSTD_isError");
    zs.set_parameter = (size_t (*)(void *, int, int))dlsym(lib, "ZSTD_DCtx_setParameter");
    zs_ready = zs.create && zs.free && zs.decompress_stream && zs.is_error && zs.set_parameter;
}

const struct lunet_zstd *lunet_zstd(void) {
    pthread_once(&zs_once, zs_load);
    return zs_ready ? &zs : NULL;
}
