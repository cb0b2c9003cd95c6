/* What libcurl alone costs per GET with C transfers in flight at once, driven the way lunet's
 * event loop drives it: C easy handles on one multi handle; when a transfer completes, its
 * handle is removed, reset, configured again and added back for the next request, until N
 * requests have been started; curl_multi_perform / curl_multi_poll between. Connections are
 * reused. No Lua and no Swift: the floor under lunet in the concurrent benchmark.
 *
 * With a fourth argument "lean", each request is set up the way lunet's loop now sets its own
 * (docs/architecture.md, "What a request costs"): the URL parsed by libcurl once and handed over
 * as a URL handle (CURLOPT_CURLU), and "no proxy" said outright instead of libcurl looking up
 * the proxy variables of the environment for every request; and the request carries the header
 * lines lunet's do: the Accept-Encoding line lunet offers (the codings this libcurl decodes, in
 * lunet's order: deflate and gzip with zlib, br, zstd) and the User-Agent line given as the
 * fifth argument. libcurl 7.88 writes request header lines through its own printf, a character
 * at a time, so these cost it ~10k instructions a request. A second row, for information: the
 * floor of issue 17's goal is the plain form.
 *
 * build: cc -O2 -o curl_floor_concurrent curl_floor_concurrent.c -lcurl
 * usage: curl_floor_concurrent URL N C [lean [USER-AGENT-LINE]]
 * Prints one line: "ok=<good responses> loop_wall=<s> loop_cpu=<s>" (the loop only). */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

static size_t count_header(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (*(long *)user)++;
    return size * count;
}

static CURLU *lean_url;   /* set in lean mode: the URL, parsed once */
static struct curl_slist *lean_lines;   /* and lunet's request header lines */

/* "Accept-Encoding: ..." as lunet offers it (Sources/CLunetCurl/curl_loader.c), or nothing. */
static struct curl_slist *accept_encoding(struct curl_slist *list) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    char line[96] = "Accept-Encoding: ";
    int n = 0;
    if (info->features & CURL_VERSION_LIBZ) { strcat(line, "deflate, gzip"); n += 2; }
    if (info->features & CURL_VERSION_BROTLI) { strcat(line, n ? ", br" : "br"); n++; }
    if (info->features & CURL_VERSION_ZSTD) { strcat(line, n ? ", zstd" : "zstd"); n++; }
    return n ? curl_slist_append(list, line) : list;
}

static void start(CURLM *multi, CURL *easy, const char *url, long *headers) {
    curl_easy_reset(easy);
    if (lean_url) {
        curl_easy_setopt(easy, CURLOPT_CURLU, lean_url);
        curl_easy_setopt(easy, CURLOPT_PROXY, "");
        curl_easy_setopt(easy, CURLOPT_NOPROXY, "");
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, lean_lines);
    } else {
        curl_easy_setopt(easy, CURLOPT_URL, url);
    }
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, count_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, headers);
    curl_multi_add_handle(multi, easy);
}

/* Runs n requests with at most c in flight; returns how many ended with a 200. */
static long run(CURLM *multi, CURL **easy, long c, const char *url, long n, long *headers) {
    long started = 0, finished = 0, ok = 0;
    for (long i = 0; i < c && started < n; i++, started++) start(multi, easy[i], url, headers);
    int running = 1;
    while (finished < n) {
        if (curl_multi_perform(multi, &running) != CURLM_OK) break;
        int queued;
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(multi, &queued)) != NULL) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *h = msg->easy_handle;
            long status = 0;
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
            if (msg->data.result == CURLE_OK && status == 200) ok++;
            finished++;
            curl_multi_remove_handle(multi, h);
            if (started < n) {
                start(multi, h, url, headers);
                started++;
            }
        }
        if (finished < n) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    return ok;
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 6 || atol(argv[2]) <= 0 || atol(argv[3]) <= 0 || (argc >= 5 && strcmp(argv[4], "lean") != 0)) {
        fprintf(stderr, "usage: %s URL N C [lean [USER-AGENT-LINE]]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    long n = atol(argv[2]), c = atol(argv[3]), headers = 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (argc >= 5) {
        lean_lines = accept_encoding(NULL);
        if (argc == 6) lean_lines = curl_slist_append(lean_lines, argv[5]);
        lean_url = curl_url();
        if (lean_url == NULL || curl_url_set(lean_url, CURLUPART_URL, url, CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
            fprintf(stderr, "curl_floor_concurrent: libcurl does not parse %s\n", url);
            return 1;
        }
    }
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, c > 256 ? c : 256L);
    CURL **easy = calloc((size_t)c, sizeof *easy);
    if (easy == NULL) return 1;
    for (long i = 0; i < c; i++) easy[i] = curl_easy_init();
    /* A first round opens the connections, as the lunet script's first GET does. */
    if (run(multi, easy, c, url, c, &headers) != c) {
        fprintf(stderr, "curl_floor_concurrent: the first GETs of %s failed\n", url);
        return 1;
    }
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    clock_t c0 = clock();
    long ok = run(multi, easy, c, url, n, &headers);
    clock_t c1 = clock();
    clock_gettime(CLOCK_MONOTONIC, &w1);
    printf("ok=%ld loop_wall=%.6f loop_cpu=%.6f\n", ok,
           (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9,
           (double)(c1 - c0) / CLOCKS_PER_SEC);
    for (long i = 0; i < c; i++) curl_easy_cleanup(easy[i]);
    free(easy);
    curl_multi_cleanup(multi);
    curl_global_cleanup();
    return 0;
}
