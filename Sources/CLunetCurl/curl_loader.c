// libcurl, opened with dlopen on first network use instead of linked.
//
// Linking libcurl maps it and the ~30 libraries it depends on (GnuTLS or OpenSSL, Kerberos,
// LDAP, SSH, RTMP, ...) into every process at start, and runs their initialisers: most of the
// start-up time of a script that prints a line. Opened here, a program pays for them only when
// it first sends a request (or asks for curl's version).
#define _GNU_SOURCE  // pthread_attr_setaffinity_np, sched_getcpu: before any system header
#include "CLunetCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

lunet_curl_api lunet_curl;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;            // 1 once every function was found and curl_global_init ran
static char load_error[512];  // why the last attempt failed

// The library's file name: Debian's libcurl4 (the OpenSSL build lunet is compiled against).
// LUNET_LIBCURL names another (a path or a soname) for a build of one's own, and for tests.
static const char *library_name(void) {
    const char *name = getenv("LUNET_LIBCURL");
    return name && *name ? name : "libcurl.so.4";
}

// Leaving without libcurl's exit handlers. Loading libcurl registers exit-time work in its
// libraries: OpenSSL's OPENSSL_cleanup (an atexit handler) and the destructors of GnuTLS and
// libtasn1 free their tables one by one, ~0.8M instructions (~0.2 ms) at the end of every
// process that sent a request, for memory the kernel takes back anyway. The lunet program
// (lunet_allow_fast_exit) registers a handler once libcurl is loaded; handlers run in reverse
// order, so it runs before those, flushes every stdio stream and ends the process with the same
// status. What registered after it (a Lua C module, say) still runs. Under a sanitizer the
// process leaves normally, so that its leak check runs.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LUNET_SANITIZED 1
#endif
#endif
static int fast_exit_allowed;

void lunet_allow_fast_exit(void) { __atomic_store_n(&fast_exit_allowed, 1, __ATOMIC_RELEASE); }

static void leave_now(int status, void *unused) {
    (void)unused;
    fflush(NULL);
    _exit(status);
}

static void register_fast_exit(void) {
#ifndef LUNET_SANITIZED
    if (__atomic_load_n(&fast_exit_allowed, __ATOMIC_ACQUIRE)) on_exit(leave_now, NULL);
#endif
}

const char *lunet_curl_library_path(void) {
    Dl_info where;
    if (!loaded || dladdr((void *)lunet_curl.version, &where) == 0 || where.dli_fname == NULL) return "";
    return where.dli_fname;
}

static int load_locked(void) {
    const char *name = library_name();
    // RTLD_LOCAL: its symbols stay out of the global namespace, so no other library of the
    // process binds to them by accident. RTLD_LAZY: as a linked library would, functions bind
    // when first called; RTLD_NOW bound every symbol of curl's ~30 libraries and made the first
    // request 1.5 ms slower than the linked build.
    void *lib = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "cannot load libcurl (%s): %s", name, dlerror());
        return -1;
    }
    lunet_curl_api api;
    memset(&api, 0, sizeof api);
    // Each entry: the field, and the symbol that fills it.
#define FIND(field, symbol)                                                                        \
    do {                                                                                           \
        *(void **)&api.field = dlsym(lib, symbol);                                                 \
        if (!api.field) {                                                                          \
            snprintf(load_error, sizeof load_error, "%s (%s) has no %s: libcurl 7.68 or later is needed", \
                     name, "libcurl", symbol);                                                     \
            dlclose(lib);                                                                          \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)
    FIND(global_init_mem, "curl_global_init_mem");
    FIND(version, "curl_version");
    FIND(version_info, "curl_version_info");
    FIND(easy_init, "curl_easy_init");
    FIND(easy_cleanup, "curl_easy_cleanup");
    FIND(easy_reset, "curl_easy_reset");
    FIND(easy_pause, "curl_easy_pause");
    FIND(easy_strerror, "curl_easy_strerror");
    FIND(easy_setopt, "curl_easy_setopt");
    FIND(easy_getinfo, "curl_easy_getinfo");
    FIND(multi_init, "curl_multi_init");
    FIND(multi_cleanup, "curl_multi_cleanup");
    FIND(multi_add_handle, "curl_multi_add_handle");
    FIND(multi_remove_handle, "curl_multi_remove_handle");
    FIND(multi_perform, "curl_multi_perform");
    FIND(multi_poll, "curl_multi_poll");
    FIND(multi_info_read, "curl_multi_info_read");
    FIND(multi_setopt, "curl_multi_setopt");
    FIND(multi_socket_action, "curl_multi_socket_action");
    FIND(share_init, "curl_share_init");
    FIND(share_cleanup, "curl_share_cleanup");
    FIND(share_setopt, "curl_share_setopt");
    FIND(slist_append, "curl_slist_append");
    FIND(slist_free_all, "curl_slist_free_all");
    FIND(mime_init, "curl_mime_init");
    FIND(mime_free, "curl_mime_free");
    FIND(mime_addpart, "curl_mime_addpart");
    FIND(mime_name, "curl_mime_name");
    FIND(mime_data, "curl_mime_data");
    FIND(mime_filedata, "curl_mime_filedata");
    FIND(mime_filename, "curl_mime_filename");
    FIND(mime_type, "curl_mime_type");
    FIND(free, "curl_free");
    FIND(easy_send, "curl_easy_send");
    FIND(easy_recv, "curl_easy_recv");
    FIND(url, "curl_url");
    FIND(url_cleanup, "curl_url_cleanup");
    FIND(url_set, "curl_url_set");
    FIND(url_get, "curl_url_get");
#undef FIND
    // With lunet's memory functions (curl_allocator.c); a libcurl the process initialised before
    // (an embedding program's own use) keeps the ones it was given.
    CURLcode rc = api.global_init_mem(CURL_GLOBAL_DEFAULT, lunet_curl_mem_malloc, lunet_curl_mem_free, lunet_curl_mem_realloc,
                                      lunet_curl_mem_strdup, lunet_curl_mem_calloc);
    register_fast_exit();   // after the handlers curl_global_init registered, so before them at exit
    if (rc != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed (%d)", (int)rc);
        return -1;  // the library stays open: curl_global_init may have started something
    }
    lunet_curl = api;
    // Never dlclose'd: curl may keep threads (the resolver) and handlers of its own.
    return 0;
}

int lunet_curl_load(void) {
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) return 0;
    pthread_mutex_lock(&load_lock);
    int rc = 0;
    if (!loaded) {
        rc = load_locked();
        if (rc == 0) __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&load_lock);
    return rc;
}

// Preloading: a process that is about to send a request (the one-shot command line, a script
// that has just named `http`) opens libcurl on a thread of its own while the main thread goes on
// with Lua; the first request then finds it loaded, or waits on load_lock for the rest of it.
// Only the lunet program allows it: it makes sure the thread has finished before the process
// exits (os.exit and main wait for it), so that exit handlers never run while curl_global_init
// is registering its own. A Lua module in a stock lua5.4 or a Swift tool never preloads.
static int preload_allowed;
static int preload_started;
static int preload_joined;
static pthread_t preload_thread;

static void *preload_main(void *unused) {
    (void)unused;
    lunet_curl_load();
    return NULL;
}

// LUNET_NO_PRELOAD=1 turns it off (to measure what it saves, or to rule it out).
void lunet_curl_allow_preload(void) {
    const char *off = getenv("LUNET_NO_PRELOAD");
    if (off && *off && strcmp(off, "0") != 0) return;
    __atomic_store_n(&preload_allowed, 1, __ATOMIC_RELEASE);
}

// The preload thread is kept off the CPU the main thread is running on. Left to itself, Linux
// often places a new thread on its creator's CPU and runs it only when the creator blocks or
// its slice ends (measured here: 2 ms later, with the other CPU idle), so the load ran after
// the Lua start-up instead of beside it. The mask only narrows where the thread may run; with
// a single allowed CPU it is left as it is.
static void keep_off_current_cpu(pthread_attr_t *attr) {
    cpu_set_t allowed;
    int here = sched_getcpu();
    if (here < 0 || here >= CPU_SETSIZE || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    if (!CPU_ISSET(here, &allowed) || CPU_COUNT(&allowed) < 2) return;
    CPU_CLR(here, &allowed);
    pthread_attr_setaffinity_np(attr, sizeof allowed, &allowed);
}

void lunet_curl_preload(void) {
    if (!__atomic_load_n(&preload_allowed, __ATOMIC_ACQUIRE) || lunet_curl_is_loaded()) return;
    if (__atomic_exchange_n(&preload_started, 1, __ATOMIC_ACQ_REL)) return;
    pthread_attr_t attr;
    int have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr) keep_off_current_cpu(&attr);
    int failed = pthread_create(&preload_thread, have_attr ? &attr : NULL, preload_main, NULL) != 0;
    if (have_attr) pthread_attr_destroy(&attr);
    if (failed) {
        // No thread: the first request loads it, as without preloading.
        __atomic_store_n(&preload_started, 0, __ATOMIC_RELEASE);
    }
}

void lunet_curl_preload_wait(void) {
    if (!__atomic_load_n(&preload_started, __ATOMIC_ACQUIRE) || preload_joined) return;
    preload_joined = 1;
    pthread_join(preload_thread, NULL);
}

int lunet_curl_is_loaded(void) { return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE); }

const char *lunet_curl_load_error(void) { return load_error; }

void lunet_curl_require(void) {
    if (lunet_curl_load() == 0) return;
    fprintf(stderr, "lunet: %s\n", load_error);
    abort();
}
