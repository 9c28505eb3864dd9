#ifndef FLIPBOOK_PROFILES_H
#define FLIPBOOK_PROFILES_H
#include <stddef.h>

/// The default CMYK profile for CMYK/YCCK images that embed none: "Chemical proof" by Graeme W. Gill
/// (public domain), the profile libvips compiles in as its "cmyk" fallback, so results compare with vips.
const unsigned char *fb_default_cmyk_profile(size_t *size);
#endif
