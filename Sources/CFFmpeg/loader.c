#include "CFFmpeg.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#define FB_STR2(x) #x
#define FB_STR(x) FB_STR2(x)
// The sonames of the libraries whose headers we compiled against, e.g. "libavcodec.so.59".
#define FB_SONAME(lib, major) "lib" #lib ".so." FB_STR(major)

static FBAVTable table;
static const char *load_error = "libav was not loaded";
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char message[512];
static int quiet_logs = 0;  // set by fb_av_quiet_logs(); read when the libraries load

static void load(void) {
    // RTLD_LAZY: our entry points come from dlsym below; binding the libraries' ~130 dependencies eagerly
    // cost ~5 ms a process. RTLD_LOCAL: each library resolves against its own dependencies, and keeping
    // them out of the global scope makes every later symbol lookup shorter (loading all four: 30.2 ms
    // global, 26.3 ms local, measured with a C loop on this machine).
    void *avutil = dlopen(FB_SONAME(avutil, LIBAVUTIL_VERSION_MAJOR), RTLD_LAZY | RTLD_LOCAL);
    void *swscale = avutil ? dlopen(FB_SONAME(swscale, LIBSWSCALE_VERSION_MAJOR), RTLD_LAZY | RTLD_LOCAL) : NULL;
    void *avcodec = swscale ? dlopen(FB_SONAME(avcodec, LIBAVCODEC_VERSION_MAJOR), RTLD_LAZY | RTLD_LOCAL) : NULL;
    void *avformat = avcodec ? dlopen(FB_SONAME(avformat, LIBAVFORMAT_VERSION_MAJOR), RTLD_LAZY | RTLD_LOCAL) : NULL;
    if (!avformat) {
        const char *why = dlerror();
        snprintf(message, sizeof message, "cannot load libav (%s); install libavformat59, libavcodec59, libswscale6",
                 why ? why : "unknown reason");
        load_error = message;
        return;
    }
#define FB_AV_RESOLVE(lib, name) \
    table.name = (__typeof__(name) *)dlsym(lib, #name); \
    if (!table.name) { \
        snprintf(message, sizeof message, "libav symbol %s not found in lib%s", #name, #lib); \
        load_error = message; \
        return; \
    }
    FB_AV_FUNCTIONS(FB_AV_RESOLVE)
#undef FB_AV_RESOLVE
    // libav's log level is one per process, so only an executable may choose it (fb_av_quiet_logs).
    if (__atomic_load_n(&quiet_logs, __ATOMIC_ACQUIRE)) table.av_log_set_level(AV_LOG_QUIET);
    __atomic_store_n(&load_error, NULL, __ATOMIC_RELEASE);
}

void fb_av_quiet_logs(void) {
    __atomic_store_n(&quiet_logs, 1, __ATOMIC_RELEASE);
    // Already loaded: set it now (setting it twice, here and in load, is harmless).
    if (__atomic_load_n(&load_error, __ATOMIC_ACQUIRE) == NULL) table.av_log_set_level(AV_LOG_QUIET);
}

const char *fb_av_load(void) {
    pthread_once(&once, load);
    return load_error;
}

const FBAVTable *fb_av_table(void) { return &table; }
