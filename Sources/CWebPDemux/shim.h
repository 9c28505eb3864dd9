#ifndef FLIPBOOK_CWEBPDEMUX_H
#define FLIPBOOK_CWEBPDEMUX_H
// libwebp's demuxer and animation decoder only (WebPAnimDecoder composites blend and dispose itself).
// The still decode API is another target's (CWebP); keep this one to demux.h.
#include <webp/demux.h>

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
#endif
