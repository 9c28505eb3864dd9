#ifndef FLIPBOOK_CTURBOJPEG_H
#define FLIPBOOK_CTURBOJPEG_H
#include <turbojpeg.h>

/// TJSCALED is a function-like macro, which Swift cannot import: the scaled size TurboJPEG decodes to
/// (rounded up) for a dimension and a scaling factor.
static inline int fb_tj_scaled(int dimension, tjscalingfactor factor) {
    return TJSCALED(dimension, factor);
}
#endif
