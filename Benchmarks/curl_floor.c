/* What libcurl alone costs per sequential GET, driven the way an event-loop host drives it:
 * one easy handle, reset and configured again for each request, added to a multi handle,
 * curl_multi_perform / curl_multi_poll until done, removed. The connection is reused.
 * No Lua and no Swift: the floor under lunet's CPU per request.
 *
 * build: cc -O2 -o curl_floor curl_floor.c -lcurl
 * usage: curl_floor URL N
 * Prints one line: "ok=<responses> loop_wall=<s> loop_cpu=<s>" (the loop only). */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
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

static int get(CURLM *multi, CURL *easy, const char *url, long *headers) {
    curl_easy_reset(easy);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, count_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, headers);
    curl_multi_add_handle(multi, easy);
    int running = 1;
    while (running) {
        if (curl_multi_perform(multi, &running) != CURLM_OK) break;
        if (running) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    int ok = 0, queued;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(multi, &queued)) != NULL) {
        long status = 0;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
        if (msg->msg == CURLMSG_DONE && msg->data.result == CURLE_OK && status == 200) ok = 1;
    }
    curl_multi_remove_handle(multi, easy);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 3 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: %s URL N\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    long n = atol(argv[2]), headers = 0, ok = 0;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    CURL *easy = curl_easy_init();
    if (!get(multi, easy, url, &headers)) {
        fprintf(stderr, "curl_floor: the first GET of %s failed\n", url);
        return 1;
    }
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    clock_t c0 = clock();
    for (long i = 0; i < n; i++) ok += get(multi, easy, url, &headers);
    clock_t c1 = clock();
    clock_gettime(CLOCK_MONOTONIC, &w1);
    printf("ok=%ld loop_wall=%.6f loop_cpu=%.6f\n", ok,
           (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9,
           (double)(c1 - c0) / CLOCKS_PER_SEC);
    curl_easy_cleanup(easy);
    curl_multi_cleanup(multi);
    curl_global_cleanup();
    return 0;
}
