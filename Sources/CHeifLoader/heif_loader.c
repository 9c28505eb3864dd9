// libheif on first use: every libheif function Flipbook calls (Swift in Sources/Flipbook/Stills and the dav1d
// plugin next to this file) is defined here as a forwarder to the function dlsym finds in libheif.so.1,
// which flipbook_heif_load() opens. Linking libheif instead loads it, and through it x265, libde265,
// libaom and dav1d, into every process: 5 MB of RSS for an empty C program, 2 MB and 7-30 ms for
// flipbook's JPEG thumbnails (`make bench-heif-decode`), paid for nothing when no HEIF comes. The prototypes come
// from <libheif/heif.h>, so the compiler checks each forwarder against the header it was built with.
#include "flipbook_heif.h"

#include <dlfcn.h>
#include <libheif/heif.h>
#include <pthread.h>
#include <stdio.h>

// The functions used, as (return type, name, parameters, arguments); VOID for those returning nothing.
#define FB_HEIF_FUNCTIONS(FUNC, VOID) \
    FUNC(struct heif_context*, heif_context_alloc, (void), ()) \
    VOID(heif_context_free, (struct heif_context* a0), (a0)) \
    FUNC(struct heif_error, heif_context_get_primary_image_handle, (struct heif_context* a0, struct heif_image_handle** a1), (a0, a1)) \
    FUNC(struct heif_error, heif_context_read_from_memory_without_copy, (struct heif_context* a0, const void* a1, size_t a2, const struct heif_reading_options* a3), (a0, a1, a2, a3)) \
    FUNC(struct heif_error, heif_decode_image, (const struct heif_image_handle* a0, struct heif_image** a1, enum heif_colorspace a2, enum heif_chroma a3, const struct heif_decoding_options* a4), (a0, a1, a2, a3, a4)) \
    FUNC(struct heif_decoding_options*, heif_decoding_options_alloc, (void), ()) \
    VOID(heif_decoding_options_free, (struct heif_decoding_options* a0), (a0)) \
    FUNC(struct heif_error, heif_image_add_plane, (struct heif_image* a0, enum heif_channel a1, int a2, int a3, int a4), (a0, a1, a2, a3, a4)) \
    FUNC(struct heif_error, heif_image_create, (int a0, int a1, enum heif_colorspace a2, enum heif_chroma a3, struct heif_image** a4), (a0, a1, a2, a3, a4)) \
    FUNC(int, heif_image_get_bits_per_pixel_range, (const struct heif_image* a0, enum heif_channel a1), (a0, a1)) \
    FUNC(enum heif_chroma, heif_image_get_chroma_format, (const struct heif_image* a0), (a0)) \
    FUNC(enum heif_colorspace, heif_image_get_colorspace, (const struct heif_image* a0), (a0)) \
    FUNC(int, heif_image_get_height, (const struct heif_image* a0, enum heif_channel a1), (a0, a1)) \
    FUNC(struct heif_error, heif_image_get_nclx_color_profile, (const struct heif_image* a0, struct heif_color_profile_nclx** a1), (a0, a1)) \
    FUNC(uint8_t*, heif_image_get_plane, (struct heif_image* a0, enum heif_channel a1, int* a2), (a0, a1, a2)) \
    FUNC(const uint8_t*, heif_image_get_plane_readonly, (const struct heif_image* a0, enum heif_channel a1, int* a2), (a0, a1, a2)) \
    FUNC(int, heif_image_get_width, (const struct heif_image* a0, enum heif_channel a1), (a0, a1)) \
    FUNC(enum heif_color_profile_type, heif_image_handle_get_color_profile_type, (const struct heif_image_handle* a0), (a0)) \
    FUNC(int, heif_image_handle_get_height, (const struct heif_image_handle* a0), (a0)) \
    FUNC(int, heif_image_handle_get_list_of_thumbnail_IDs, (const struct heif_image_handle* a0, heif_item_id* a1, int a2), (a0, a1, a2)) \
    FUNC(int, heif_image_handle_get_luma_bits_per_pixel, (const struct heif_image_handle* a0), (a0)) \
    FUNC(struct heif_error, heif_image_handle_get_nclx_color_profile, (const struct heif_image_handle* a0, struct heif_color_profile_nclx** a1), (a0, a1)) \
    FUNC(int, heif_image_handle_get_number_of_thumbnails, (const struct heif_image_handle* a0), (a0)) \
    FUNC(struct heif_error, heif_image_handle_get_raw_color_profile, (const struct heif_image_handle* a0, void* a1), (a0, a1)) \
    FUNC(size_t, heif_image_handle_get_raw_color_profile_size, (const struct heif_image_handle* a0), (a0)) \
    FUNC(struct heif_error, heif_image_handle_get_thumbnail, (const struct heif_image_handle* a0, heif_item_id a1, struct heif_image_handle** a2), (a0, a1, a2)) \
    FUNC(int, heif_image_handle_get_width, (const struct heif_image_handle* a0), (a0)) \
    FUNC(int, heif_image_handle_has_alpha_channel, (const struct heif_image_handle* a0), (a0)) \
    FUNC(int, heif_image_handle_is_premultiplied_alpha, (const struct heif_image_handle* a0), (a0)) \
    VOID(heif_image_handle_release, (const struct heif_image_handle* a0), (a0)) \
    FUNC(int, heif_image_has_channel, (const struct heif_image* a0, enum heif_channel a1), (a0, a1)) \
    VOID(heif_image_release, (const struct heif_image* a0), (a0)) \
    FUNC(struct heif_error, heif_image_set_nclx_color_profile, (struct heif_image* a0, const struct heif_color_profile_nclx* a1), (a0, a1)) \
    FUNC(struct heif_color_profile_nclx*, heif_nclx_color_profile_alloc, (void), ()) \
    VOID(heif_nclx_color_profile_free, (struct heif_color_profile_nclx* a0), (a0)) \
    FUNC(struct heif_error, heif_nclx_color_profile_set_color_primaries, (struct heif_color_profile_nclx* a0, uint16_t a1), (a0, a1)) \
    FUNC(struct heif_error, heif_nclx_color_profile_set_matrix_coefficients, (struct heif_color_profile_nclx* a0, uint16_t a1), (a0, a1)) \
    FUNC(struct heif_error, heif_nclx_color_profile_set_transfer_characteristics, (struct heif_color_profile_nclx* a0, uint16_t a1), (a0, a1)) \
    FUNC(struct heif_error, heif_register_decoder_plugin, (const struct heif_decoder_plugin* a0), (a0))

#define FB_POINTER(ret, name, params, args) static ret(*p_##name) params;
#define FB_POINTER_VOID(name, params, args) static void(*p_##name) params;
FB_HEIF_FUNCTIONS(FB_POINTER, FB_POINTER_VOID)

#define FB_FORWARD(ret, name, params, args) ret name params { return p_##name args; }
#define FB_FORWARD_VOID(name, params, args) void name params { p_##name args; }
FB_HEIF_FUNCTIONS(FB_FORWARD, FB_FORWARD_VOID)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error = "libheif was not loaded";
static char message[256];

static void load(void) {
    // RTLD_LOCAL: libheif's codecs stay out of the global scope. Its own internal calls still find its own
    // functions (or, if the executable exports these forwarders, the forwarders, which lead back to them).
    void *lib = dlopen("libheif.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(message, sizeof message, "cannot load libheif.so.1 (%s); install libheif1", why ? why : "unknown reason");
        load_error = message;
        return;
    }
#define FB_RESOLVE(ret, name, params, args) \
    if (!(p_##name = (ret(*) params)dlsym(lib, #name))) { \
        snprintf(message, sizeof message, "libheif has no %s", #name); \
        load_error = message; \
        return; \
    }
#define FB_RESOLVE_VOID(name, params, args) FB_RESOLVE(void, name, params, args)
    FB_HEIF_FUNCTIONS(FB_RESOLVE, FB_RESOLVE_VOID)
    load_error = NULL;
}

const char *flipbook_heif_load(void) {
    pthread_once(&once, load);
    return load_error;
}
