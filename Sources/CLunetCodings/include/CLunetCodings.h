#ifndef CLUNET_CODINGS_H
#define CLUNET_CODINGS_H
// Content codings (RFC 9110 §8.4.1) through the system's libraries, each opened with dlopen on
// first use as libcurl is (zlib, brotli's decoder, zstd: wherever libcurl is, they are, since
// it links them). lunet removes a response's content codings itself rather than leave it to
// libcurl, whose handling differs between versions (Transfer/ContentDecoder.swift). No curl
// or Lua header.
#include <stddef.h>

/// gzip (RFC 1952) through zlib (gzip.c). On LUNET_GZIP_OK, *out is a malloc'ed buffer of
/// *outlen bytes the caller frees.
enum { LUNET_GZIP_OK = 0, LUNET_GZIP_NO_ZLIB = 1, LUNET_GZIP_CORRUPT = 2, LUNET_GZIP_TOO_LARGE = 3, LUNET_GZIP_NO_MEMORY = 4 };
int lunet_gzip(const void *in, size_t n, void **out, size_t *outlen);
/// Decompresses a whole gzip member; more than `max` bytes out is LUNET_GZIP_TOO_LARGE, found
/// before more than max + 1 bytes are held (a small bomb never grows past the limit).
int lunet_gunzip(const void *in, size_t n, size_t max, void **out, size_t *outlen);

/// Snappy's block format through libsnappy (snappy.c), for Prometheus remote write. On
/// LUNET_SNAPPY_OK, *out is a malloc'ed buffer of *outlen bytes the caller frees. Uncompressing
/// refuses (LUNET_SNAPPY_TOO_LARGE) a block whose header says more than `max` bytes.
enum { LUNET_SNAPPY_OK = 0, LUNET_SNAPPY_NO_LIBRARY = 1, LUNET_SNAPPY_CORRUPT = 2, LUNET_SNAPPY_TOO_LARGE = 3, LUNET_SNAPPY_NO_MEMORY = 4 };
int lunet_snappy_compress(const void *in, size_t n, void **out, size_t *outlen);
int lunet_snappy_uncompress(const void *in, size_t n, size_t max, void **out, size_t *outlen);

/// The codings a streaming decoder is made for (decoder.c). "x-gzip" is gzip.
enum { LUNET_CODING_GZIP = 1, LUNET_CODING_DEFLATE = 2, LUNET_CODING_BR = 3, LUNET_CODING_ZSTD = 4 };
/// Which codings can be decoded here: bit (1 << coding) is set when its library opens.
int lunet_codings_available(void);

typedef struct lunet_decoder lunet_decoder;
/// A decoder for `coding`; NULL when its library cannot be opened or memory is short.
lunet_decoder *lunet_decoder_new(int coding);
enum { LUNET_DECODE_MORE = 0, LUNET_DECODE_END = 1, LUNET_DECODE_CORRUPT = 2, LUNET_DECODE_NO_MEMORY = 3 };
/// Decodes from *in (*inlen bytes) into out (cap bytes): moves *in and *inlen past what it
/// used and sets *produced. LUNET_DECODE_MORE: call again while *inlen > 0 or *produced == cap;
/// LUNET_DECODE_END: the coded data has ended (bytes after it are left in *in, unused);
/// LUNET_DECODE_CORRUPT: the data is not in this coding.
int lunet_decoder_step(lunet_decoder *d, const unsigned char **in, size_t *inlen, unsigned char *out, size_t cap, size_t *produced);
/// Whether the coded data seen so far ends where the coding allows it to end (a gzip or brotli
/// stream's last block, a zstd frame's end): a body that stops elsewhere was cut short.
int lunet_decoder_complete(const lunet_decoder *d);
void lunet_decoder_free(lunet_decoder *d);

#endif
