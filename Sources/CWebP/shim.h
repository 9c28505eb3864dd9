#ifndef FLIPBOOK_CWEBP_H
#define FLIPBOOK_CWEBP_H
// libwebp: the still decode API (scaled decoding), the still encode API, and the demuxer with its animation
// decoder (animated WebP; WebPAnimDecoder composites blend and dispose itself). One module for all: demux.h
// includes decode.h, and two modules holding the same header would each claim its declarations.
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/demux.h>

/// WebPInitDecoderConfig and WebPGetFeatures are static inline wrappers that pass the ABI version to the
/// library's *Internal functions; Swift imports them, but these names say they are the only entry points used.
static inline int fb_webp_init_config(WebPDecoderConfig *config) { return WebPInitDecoderConfig(config); }
static inline VP8StatusCode fb_webp_get_features(const uint8_t *data, size_t size, WebPBitstreamFeatures *features) {
    return WebPGetFeatures(data, size, features);
}

// WebPAnimDecoderOptionsInit and WebPAnimDecoderNew are static inline functions that pass the ABI
// version; Swift imports them, but a named wrapper keeps the version check in one place.
static inline int fb_webp_anim_options_init(WebPAnimDecoderOptions *options) {
    return WebPAnimDecoderOptionsInit(options);
}
static inline WebPAnimDecoder *fb_webp_anim_decoder_new(const uint8_t *bytes, size_t size,
                                                        const WebPAnimDecoderOptions *options) {
    WebPData data = { bytes, size };
    return WebPAnimDecoderNew(&data, options);
}
// WebPDemux is a static inline function too: the demuxer alone reads the headers (canvas, frames,
// durations) so limits are checked before WebPAnimDecoderNew allocates its two canvases.
static inline WebPDemuxer *fb_webp_demux(const uint8_t *bytes, size_t size) {
    WebPData data = { bytes, size };
    return WebPDemux(&data);
}
// WebPConfigInit and WebPPictureInit are static inline wrappers passing the encoder's ABI version, likewise.
static inline int fb_webp_config_init(WebPConfig *config) { return WebPConfigInit(config); }
static inline int fb_webp_picture_init(WebPPicture *picture) { return WebPPictureInit(picture); }
#endif
