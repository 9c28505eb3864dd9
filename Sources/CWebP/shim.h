#ifndef FLIPBOOK_CWEBP_H
#define FLIPBOOK_CWEBP_H
#include <webp/decode.h>

/// WebPInitDecoderConfig and WebPGetFeatures are static inline wrappers that pass the ABI version to the
/// library's *Internal functions; Swift imports them, but these names say they are the only entry points used.
static inline int fb_webp_init_config(WebPDecoderConfig *config) { return WebPInitDecoderConfig(config); }
static inline VP8StatusCode fb_webp_get_features(const uint8_t *data, size_t size, WebPBitstreamFeatures *features) {
    return WebPGetFeatures(data, size, features);
}
#endif
