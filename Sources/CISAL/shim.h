#ifndef FLIPBOOK_CISAL_H
#define FLIPBOOK_CISAL_H
// Intel's ISA-L (Debian's libisal-dev): its streaming inflate (igzip, zlib wrapper and Adler-32 checked)
// and its CRC-32 (the PNG/gzip polynomial), both SIMD-accelerated. A PNG's IDAT stream inflates here
// about 1.6x faster than through zlib, which libpng is bound to.
#include <isa-l/igzip_lib.h>
#include <isa-l/crc.h>
#endif
