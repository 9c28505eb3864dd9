#ifndef FLIPBOOK_HEIF_H
#define FLIPBOOK_HEIF_H

/// Loads libheif (libheif.so.1) with dlopen on first use and resolves the libheif functions Flipbook
/// calls (heif_loader.c defines them as forwarders): linked normally, libheif and its HEVC/AV1 codecs
/// (x265, libde265, libaom, dav1d) cost every process memory and time at start, JPEG and PNG thumbnails
/// included (2 MB and 7-30 ms for flipbook's thumb, `make bench-heif-decode`). Returns NULL once loaded, else why not; call it before any heif_*
/// function.
const char *flipbook_heif_load(void);

/// Registers Flipbook's AV1 decoder with libheif (process-wide, once; later calls do nothing): dav1d with
/// one frame in flight. libheif 1.15's own dav1d plugin keeps dav1d's defaults, which pipeline
/// ceil(sqrt(threads)) frames and, for one 12 MP still, double the peak memory (162 MB against 86 MB for
/// the decode alone, `make bench-heif-decode`). Returns 0 on success.
int flipbook_heif_register_dav1d(void);

#endif
