#ifndef FLIPBOOK_CHEIF_H
#define FLIPBOOK_CHEIF_H
#include <libheif/heif.h>
#endif
