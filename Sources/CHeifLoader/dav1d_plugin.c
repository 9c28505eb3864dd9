// A libheif decoder plugin (heif_plugin.h, API version 3) over dav1d, registered with a higher priority
// than libheif's built-in one. It keeps libheif's behaviour (libheif still parses the file, assembles
// grids, decodes alpha items through this plugin, applies transforms and colour boxes) and changes only
// dav1d's settings: one frame in flight, as libavif uses for still images.
#include "flipbook_heif.h"

#include <dav1d/dav1d.h>
#include <errno.h>
#include <libheif/heif.h>
#include <libheif/heif_plugin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/// The compressed bytes libheif pushes (the av1C configuration OBUs, then the item's data).
typedef struct {
    uint8_t *bytes;
    size_t size, capacity;
} Decoder;

/// Above libheif's dav1d (150) and libaom (100) plugins.
enum { PRIORITY = 200 };
/// dav1d's frame size limit: libheif's own maximum image size (and Flipbook checks its pixel limit first).
static const unsigned FRAME_SIZE_LIMIT = 32768u * 32768u / 4u;

static struct heif_error status(enum heif_error_code code, const char *message) {
    struct heif_error e = {code, heif_suberror_Unspecified, message};
    return e;
}

static const char *plugin_name(void) { return "Flipbook dav1d (one frame in flight)"; }
static void init_plugin(void) {}
static void deinit_plugin(void) {}
static int does_support_format(enum heif_compression_format format) { return format == heif_compression_AV1 ? PRIORITY : 0; }

static struct heif_error new_decoder(void **out) {
    Decoder *d = calloc(1, sizeof(Decoder));
    if (!d) return status(heif_error_Memory_allocation_error, "out of memory");
    *out = d;
    return status(heif_error_Ok, "Success");
}

static void free_decoder(void *raw) {
    Decoder *d = raw;
    if (!d) return;
    free(d->bytes);
    free(d);
}

static void set_strict_decoding(void *raw, int flag) { (void)raw; (void)flag; }

static struct heif_error push_data(void *raw, const void *data, size_t size) {
    Decoder *d = raw;
    if (size > SIZE_MAX - d->size) return status(heif_error_Memory_allocation_error, "AV1 data too large");
    if (d->size + size > d->capacity) {
        size_t capacity = d->size + size;
        uint8_t *grown = realloc(d->bytes, capacity);
        if (!grown) return status(heif_error_Memory_allocation_error, "out of memory");
        d->bytes = grown;
        d->capacity = capacity;
    }
    memcpy(d->bytes + d->size, data, size);
    d->size += size;
    return status(heif_error_Ok, "Success");
}

/// Sends all data and returns the first picture (0) or dav1d's error.
static int decode_picture(Dav1dContext *c, Decoder *d, Dav1dPicture *picture) {
    Dav1dData data = {0};
    uint8_t *buffer = dav1d_data_create(&data, d->size);
    if (!buffer) return DAV1D_ERR(ENOMEM);
    memcpy(buffer, d->bytes, d->size);
    int result;
    for (;;) {
        if (data.sz > 0) {
            result = dav1d_send_data(c, &data);
            if (result < 0 && result != DAV1D_ERR(EAGAIN)) break;
        }
        result = dav1d_get_picture(c, picture);
        if (result == 0) break;
        if (result != DAV1D_ERR(EAGAIN)) break;
        if (data.sz == 0) {
            result = DAV1D_ERR(EINVAL);  // everything sent, nothing came out
            break;
        }
    }
    if (data.sz > 0) dav1d_data_unref(&data);
    return result;
}

/// Copies `picture` into a new heif_image with its planes, bit depth and colour description.
static struct heif_error to_heif_image(const Dav1dPicture *picture, struct heif_image **out) {
    int w = picture->p.w, h = picture->p.h, bits = picture->p.bpc;
    enum heif_chroma chroma;
    switch (picture->p.layout) {
    case DAV1D_PIXEL_LAYOUT_I400: chroma = heif_chroma_monochrome; break;
    case DAV1D_PIXEL_LAYOUT_I420: chroma = heif_chroma_420; break;
    case DAV1D_PIXEL_LAYOUT_I422: chroma = heif_chroma_422; break;
    case DAV1D_PIXEL_LAYOUT_I444: chroma = heif_chroma_444; break;
    default: return status(heif_error_Unsupported_feature, "unknown AV1 pixel layout");
    }
    struct heif_image *image = NULL;
    struct heif_error e = heif_image_create(w, h, chroma == heif_chroma_monochrome ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
                                            chroma, &image);
    if (e.code != heif_error_Ok) return e;
    const enum heif_channel channels[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    int planes = chroma == heif_chroma_monochrome ? 1 : 3;
    int ssx = picture->p.layout == DAV1D_PIXEL_LAYOUT_I420 || picture->p.layout == DAV1D_PIXEL_LAYOUT_I422;
    int ssy = picture->p.layout == DAV1D_PIXEL_LAYOUT_I420;
    size_t sample = bits > 8 ? 2 : 1;
    for (int p = 0; p < planes; p++) {
        int pw = p == 0 ? w : (w + ssx) >> ssx, ph = p == 0 ? h : (h + ssy) >> ssy;
        e = heif_image_add_plane(image, channels[p], pw, ph, bits);
        if (e.code != heif_error_Ok) {
            heif_image_release(image);
            return e;
        }
        int stride = 0;
        uint8_t *dst = heif_image_get_plane(image, channels[p], &stride);
        const uint8_t *src = picture->data[p];
        ptrdiff_t srcStride = picture->stride[p == 0 ? 0 : 1];
        if (!dst || !src) {
            heif_image_release(image);
            return status(heif_error_Decoder_plugin_error, "AV1 picture without a plane");
        }
        for (int y = 0; y < ph; y++) memcpy(dst + (size_t)y * stride, src + (ptrdiff_t)y * srcStride, (size_t)pw * sample);
    }
    const Dav1dSequenceHeader *seq = picture->seq_hdr;
    if (seq) {
        struct heif_color_profile_nclx *nclx = heif_nclx_color_profile_alloc();
        if (nclx) {
            heif_nclx_color_profile_set_color_primaries(nclx, (uint16_t)seq->pri);
            heif_nclx_color_profile_set_transfer_characteristics(nclx, (uint16_t)seq->trc);
            heif_nclx_color_profile_set_matrix_coefficients(nclx, (uint16_t)seq->mtrx);
            nclx->full_range_flag = seq->color_range ? 1 : 0;
            heif_image_set_nclx_color_profile(image, nclx);
            heif_nclx_color_profile_free(nclx);
        }
    }
    *out = image;
    return status(heif_error_Ok, "Success");
}

static struct heif_error decode_image(void *raw, struct heif_image **out) {
    Decoder *d = raw;
    Dav1dSettings settings;
    dav1d_default_settings(&settings);
    settings.max_frame_delay = 1;
    settings.all_layers = 0;
    settings.frame_size_limit = FRAME_SIZE_LIMIT;
    Dav1dContext *c = NULL;
    if (dav1d_open(&c, &settings) < 0) return status(heif_error_Decoder_plugin_error, "dav1d could not be opened");
    Dav1dPicture picture = {0};
    int result = decode_picture(c, d, &picture);
    struct heif_error e = result == 0 ? to_heif_image(&picture, out)
                                      : status(heif_error_Decoder_plugin_error, "dav1d could not decode the AV1 image");
    if (result == 0) dav1d_picture_unref(&picture);
    dav1d_close(&c);
    return e;
}

static const struct heif_decoder_plugin plugin = {
    .plugin_api_version = 3,
    .get_plugin_name = plugin_name,
    .init_plugin = init_plugin,
    .deinit_plugin = deinit_plugin,
    .does_support_format = does_support_format,
    .new_decoder = new_decoder,
    .free_decoder = free_decoder,
    .push_data = push_data,
    .decode_image = decode_image,
    .set_strict_decoding = set_strict_decoding,
    .id_name = "flipbook-dav1d",
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int registration = -1;

static void register_once(void) { registration = heif_register_decoder_plugin(&plugin).code == heif_error_Ok ? 0 : -1; }

int flipbook_heif_register_dav1d(void) {
    pthread_once(&once, register_once);
    return registration;
}
