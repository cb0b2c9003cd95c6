// The curl shim under the core: libcurl, opened with dlopen on first network use and reached
// through a table of function pointers and typed wrappers (variadic C, curl_easy_setopt and
// its kind, cannot be called from Swift), and libcurl's memory functions. No Lua header, so
// LunetCore, which stands on this and the Linux shim (CLunetLinux), cannot see Lua's API
// (scripts/check-layers checks that it stays so). The Lua bridge is CLunetLua.
#ifndef CLUNET_CURL_H
#define CLUNET_CURL_H

#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>

// ---------------------------------------------------------------------------------------------
// libcurl: opened with dlopen on first network use (curl_loader.c), never linked, and reached
// through this table. Call lunet_curl_load (or lunet_curl_require) before any other function
// here; the core does so before it makes its first handle.
// ---------------------------------------------------------------------------------------------
typedef struct {
    CURLcode (*global_init_mem)(long, curl_malloc_callback, curl_free_callback, curl_realloc_callback,
                                curl_strdup_callback, curl_calloc_callback);
    char *(*version)(void);
    curl_version_info_data *(*version_info)(CURLversion);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_pause)(CURL *, int);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_cleanup)(CURLSH *);
    CURLSHcode (*share_setopt)(CURLSH *, CURLSHoption, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    curl_mime *(*mime_init)(CURL *);
    void (*mime_free)(curl_mime *);
    curl_mimepart *(*mime_addpart)(curl_mime *);
    CURLcode (*mime_name)(curl_mimepart *, const char *);
    CURLcode (*mime_data)(curl_mimepart *, const char *, size_t);
    CURLcode (*mime_filedata)(curl_mimepart *, const char *);
    CURLcode (*mime_filename)(curl_mimepart *, const char *);
    CURLcode (*mime_type)(curl_mimepart *, const char *);
    void (*free)(void *);
    CURLcode (*easy_send)(CURL *, const void *, size_t, size_t *);
    CURLcode (*easy_recv)(CURL *, void *, size_t, size_t *);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
    CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
} lunet_curl_api;
extern lunet_curl_api lunet_curl;

/// Opens libcurl (LUNET_LIBCURL, else libcurl.so.4) and runs curl_global_init, once per
/// process (thread-safe). 0 on success; -1 with the reason in lunet_curl_load_error().
int lunet_curl_load(void);
int lunet_curl_is_loaded(void);
const char *lunet_curl_load_error(void);
/// Lets lunet_curl_preload start a thread (the lunet program only: it waits for that thread
/// with lunet_curl_preload_wait before exiting).
void lunet_curl_allow_preload(void);
/// Lets the process skip the exit handlers libcurl's libraries register (curl_loader.c says
/// why): the lunet program only, which has closed its host and files before it exits.
void lunet_allow_fast_exit(void);
/// Starts opening libcurl on a thread of its own, once, if allowed and not loaded yet.
void lunet_curl_preload(void);
/// Waits for a preload thread to finish (main thread only; nothing if none was started).
void lunet_curl_preload_wait(void);
/// lunet_curl_load, or exit with the reason on standard error (for paths that cannot report).
void lunet_curl_require(void);

/// libcurl's memory functions (curl_allocator.c says why): glibc's, with each thread keeping
/// freed blocks of up to 64 KB (512 KB in all) for its next allocations of their size.
void *lunet_curl_mem_malloc(size_t n);
void lunet_curl_mem_free(void *p);
void *lunet_curl_mem_realloc(void *p, size_t n);
void *lunet_curl_mem_calloc(size_t count, size_t size);
char *lunet_curl_mem_strdup(const char *s);
/// The blocks (and their bytes) the calling thread keeps for libcurl now (for tests).
void lunet_curl_mem_counts(size_t *blocks, size_t *bytes);
/// 1 when freed blocks are kept; 0 in a build under AddressSanitizer, where nothing is.
int lunet_curl_mem_keeps_blocks(void);

static inline CURL *lunet_curl_easy_init(void) { return lunet_curl.easy_init(); }
static inline void lunet_curl_easy_cleanup(CURL *h) { lunet_curl.easy_cleanup(h); }
static inline void lunet_curl_easy_reset(CURL *h) { lunet_curl.easy_reset(h); }
static inline CURLcode lunet_curl_easy_pause(CURL *h, int mask) { return lunet_curl.easy_pause(h, mask); }
static inline const char *lunet_curl_easy_strerror(CURLcode c) { return lunet_curl.easy_strerror(c); }
static inline const char *lunet_curl_version(void) { return lunet_curl.version(); }
/// libcurl's version as 0xXXYYZZ (8.0.0 is 0x080000), 0 when it cannot say.
static inline unsigned int lunet_curl_version_num(void) {
    const curl_version_info_data *info = lunet_curl.version_info(CURLVERSION_NOW);
    return info ? info->version_num : 0;
}
/// What the loaded libcurl was built with (LibcurlInfo.swift reads it; NULL before it loads).
static inline const curl_version_info_data *lunet_curl_info(void) { return lunet_curl.version_info(CURLVERSION_NOW); }
/// Its feature bits as plain ints for Swift.
static inline int lunet_curl_feature_http2(void) { return CURL_VERSION_HTTP2; }
static inline int lunet_curl_feature_http3(void) { return CURL_VERSION_HTTP3; }
/// The file the loaded libcurl came from (dladdr), "" when it cannot say.
const char *lunet_curl_library_path(void);
static inline CURLM *lunet_curl_multi_init(void) { return lunet_curl.multi_init(); }
static inline CURLMcode lunet_curl_multi_cleanup(CURLM *m) { return lunet_curl.multi_cleanup(m); }
static inline CURLMcode lunet_curl_multi_add_handle(CURLM *m, CURL *h) { return lunet_curl.multi_add_handle(m, h); }
static inline CURLMcode lunet_curl_multi_remove_handle(CURLM *m, CURL *h) { return lunet_curl.multi_remove_handle(m, h); }
static inline CURLMcode lunet_curl_multi_perform(CURLM *m, int *running) { return lunet_curl.multi_perform(m, running); }
static inline CURLMcode lunet_curl_multi_poll(CURLM *m, struct curl_waitfd *fds, unsigned int n, int timeout, int *ready) {
    return lunet_curl.multi_poll(m, fds, n, timeout, ready);
}
static inline CURLMsg *lunet_curl_multi_info_read(CURLM *m, int *left) { return lunet_curl.multi_info_read(m, left); }
static inline CURLSH *lunet_curl_share_init(void) { return lunet_curl.share_init(); }
static inline CURLSHcode lunet_curl_share_cleanup(CURLSH *s) { return lunet_curl.share_cleanup(s); }
static inline struct curl_slist *lunet_curl_slist_append(struct curl_slist *l, const char *s) { return lunet_curl.slist_append(l, s); }
static inline void lunet_curl_slist_free_all(struct curl_slist *l) { lunet_curl.slist_free_all(l); }
static inline curl_mime *lunet_curl_mime_init(CURL *h) { return lunet_curl.mime_init(h); }
static inline void lunet_curl_mime_free(curl_mime *m) { lunet_curl.mime_free(m); }
static inline curl_mimepart *lunet_curl_mime_addpart(curl_mime *m) { return lunet_curl.mime_addpart(m); }
static inline CURLcode lunet_curl_mime_name(curl_mimepart *p, const char *s) { return lunet_curl.mime_name(p, s); }
static inline CURLcode lunet_curl_mime_data(curl_mimepart *p, const char *d, size_t n) { return lunet_curl.mime_data(p, d, n); }
static inline CURLcode lunet_curl_mime_filedata(curl_mimepart *p, const char *s) { return lunet_curl.mime_filedata(p, s); }
static inline CURLcode lunet_curl_mime_filename(curl_mimepart *p, const char *s) { return lunet_curl.mime_filename(p, s); }
static inline CURLcode lunet_curl_mime_type(curl_mimepart *p, const char *s) { return lunet_curl.mime_type(p, s); }
static inline void lunet_curl_free(void *p) { lunet_curl.free(p); }
static inline CURLcode lunet_curl_easy_send(CURL *h, const void *p, size_t n, size_t *sent) { return lunet_curl.easy_send(h, p, n, sent); }
static inline CURLcode lunet_curl_easy_recv(CURL *h, void *p, size_t n, size_t *got) { return lunet_curl.easy_recv(h, p, n, got); }
/// A URL handle holding `url` parsed as libcurl parses CURLOPT_URL's text (the same flags:
/// CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME) but with its path as written
/// (CURLU_PATH_AS_IS): which dot segments go is lunet's decision, the same on every libcurl
/// (libcurl 8 also removes percent-encoded ones, 7.88 only "." and ".."; ParsedURL.swift).
/// NULL when it does not parse (then CURLOPT_URL reports the problem). Free it with
/// lunet_curl_url_free.
static inline CURLU *lunet_curl_url_parse_as_is(const char *url) {
    CURLU *u = lunet_curl.url();
    if (u == NULL) return NULL;
    if (lunet_curl.url_set(u, CURLUPART_URL, url, CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS) != CURLUE_OK) {
        lunet_curl.url_cleanup(u);
        return NULL;
    }
    return u;
}
/// One part of a parsed URL as libcurl writes it (free it with lunet_curl_free); NULL when the
/// URL has no such part.
static inline char *lunet_curl_url_part(CURLU *u, CURLUPart part) {
    char *text = NULL;
    return lunet_curl.url_get(u, part, &text, 0) == CURLUE_OK ? text : NULL;
}
/// Replaces the path of a parsed URL with `path`, taken as it is (no encoding, no dot
/// segments removed); 0, or -1 when libcurl refuses it.
static inline int lunet_curl_url_set_path(CURLU *u, const char *path) {
    return lunet_curl.url_set(u, CURLUPART_PATH, path, 0) == CURLUE_OK ? 0 : -1;
}
static inline void lunet_curl_url_free(CURLU *u) { lunet_curl.url_cleanup(u); }

// Typed (curl_easy_setopt and friends are variadic).
static inline CURLcode lunet_easy_setopt_long(CURL *h, CURLoption o, long v) { return lunet_curl.easy_setopt(h, o, v); }
static inline CURLcode lunet_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return lunet_curl.easy_setopt(h, o, v); }
static inline CURLcode lunet_easy_setopt_ptr(CURL *h, CURLoption o, void *v) { return lunet_curl.easy_setopt(h, o, v); }
static inline CURLcode lunet_easy_setopt_str(CURL *h, CURLoption o, const char *v) { return lunet_curl.easy_setopt(h, o, v); }
static inline CURLcode lunet_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return lunet_curl.easy_setopt(h, o, v); }
static inline CURLcode lunet_easy_setopt_write(CURL *h, CURLoption o, curl_write_callback f) { return lunet_curl.easy_setopt(h, o, f); }
static inline CURLcode lunet_easy_setopt_sockopt(CURL *h, curl_sockopt_callback f) { return lunet_curl.easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, f); }
static inline CURLcode lunet_easy_setopt_read(CURL *h, CURLoption o, curl_read_callback f) { return lunet_curl.easy_setopt(h, o, f); }
static inline CURLcode lunet_easy_setopt_xferinfo(CURL *h, CURLoption o, curl_xferinfo_callback f) { return lunet_curl.easy_setopt(h, o, f); }
static inline CURLcode lunet_easy_setopt_debug(CURL *h, CURLoption o, curl_debug_callback f) { return lunet_curl.easy_setopt(h, o, f); }
/// CURLINFO_HEADER_OUT, as a plain int for Swift (curl_infotype is an enum).
static inline int lunet_info_header_out(void) { return CURLINFO_HEADER_OUT; }
static inline CURLcode lunet_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return lunet_curl.easy_getinfo(h, i, v); }
static inline CURLcode lunet_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return lunet_curl.easy_getinfo(h, i, v); }
static inline CURLcode lunet_easy_getinfo_str(CURL *h, CURLINFO i, char **v) { return lunet_curl.easy_getinfo(h, i, v); }
static inline CURLcode lunet_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return lunet_curl.easy_getinfo(h, i, v); }
static inline CURLcode lunet_easy_getinfo_socket(CURL *h, CURLINFO i, int *v) {
    curl_socket_t s = CURL_SOCKET_BAD;
    CURLcode c = lunet_curl.easy_getinfo(h, i, &s);
    *v = (int)s;
    return c;
}
static inline CURLMcode lunet_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return lunet_curl.multi_setopt(m, o, v); }
static inline CURLMcode lunet_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return lunet_curl.multi_setopt(m, o, v); }
static inline CURLMcode lunet_multi_setopt_socketfunction(CURLM *m, curl_socket_callback f) {
    return lunet_curl.multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f);
}
static inline CURLMcode lunet_multi_setopt_timerfunction(CURLM *m, curl_multi_timer_callback f) {
    return lunet_curl.multi_setopt(m, CURLMOPT_TIMERFUNCTION, f);
}
/// curl_multi_socket_action with a plain int for the socket (CURL_SOCKET_TIMEOUT is -1).
static inline CURLMcode lunet_curl_multi_socket_action(CURLM *m, int fd, int mask, int *running) {
    return lunet_curl.multi_socket_action(m, (curl_socket_t)fd, mask, running);
}
/// CURL_POLL_* and CURL_CSELECT_* as plain ints for Swift (macros it does not import).
static inline int lunet_poll_in(void) { return CURL_POLL_IN; }
static inline int lunet_poll_out(void) { return CURL_POLL_OUT; }
static inline int lunet_poll_remove(void) { return CURL_POLL_REMOVE; }
static inline int lunet_cselect_in(void) { return CURL_CSELECT_IN; }
static inline int lunet_cselect_out(void) { return CURL_CSELECT_OUT; }
static inline int lunet_cselect_err(void) { return CURL_CSELECT_ERR; }
static inline CURLSHcode lunet_share_setopt_long(CURLSH *s, CURLSHoption o, long v) { return lunet_curl.share_setopt(s, o, v); }

/// curl's message record, read without touching its union from Swift.
static inline CURL *lunet_msg_handle(CURLMsg *m) { return m->easy_handle; }
static inline int lunet_msg_is_done(CURLMsg *m) { return m->msg == CURLMSG_DONE; }
static inline CURLcode lunet_msg_result(CURLMsg *m) { return m->data.result; }

#endif
