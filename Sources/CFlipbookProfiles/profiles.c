#include "CFlipbookProfiles.h"

// C23 #embed (clang accepts it in its default C17 mode as an extension; the pragma says that is intended): the profile's bytes, compiled into the binary (no file to find at run time).
#pragma clang diagnostic ignored "-Wc23-extensions"
static const unsigned char cmyk[] = {
#embed "cmyk.icm"
};

const unsigned char *fb_default_cmyk_profile(size_t *size) {
    *size = sizeof cmyk;
    return cmyk;
}
