#ifndef FLIPBOOK_CGIF_H
#define FLIPBOOK_CGIF_H
#include <gif_lib.h>
#endif
