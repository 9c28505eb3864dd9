#ifndef FLIPBOOK_CLCMS2_H
#define FLIPBOOK_CLCMS2_H
#include <lcms2.h>

/// TYPE_* pixel formats are macros built from other macros (COLORSPACE_SH, CHANNELS_SH, ...), which Swift
/// does not import: the ones Flipbook's transforms use, as constants.
static const cmsUInt32Number fb_TYPE_RGB_8 = TYPE_RGB_8;
static const cmsUInt32Number fb_TYPE_RGBA_8 = TYPE_RGBA_8;
static const cmsUInt32Number fb_TYPE_GRAY_8 = TYPE_GRAY_8;
static const cmsUInt32Number fb_TYPE_CMYK_8 = TYPE_CMYK_8;
/// Adobe (Photoshop) CMYK JPEGs store inverted ink amounts (255 = no ink).
static const cmsUInt32Number fb_TYPE_CMYK_8_REV = TYPE_CMYK_8_REV;
#endif
