#ifndef FLIPBOOK_HEIF_DAV1D_H
#define FLIPBOOK_HEIF_DAV1D_H

/// Registers Flipbook's AV1 decoder with libheif (process-wide, once; later calls do nothing): dav1d with
/// one frame in flight. libheif 1.15's own dav1d plugin keeps dav1d's defaults, which pipeline
/// ceil(sqrt(threads)) frames and, for one 12 MP still, double the peak memory (166 MB against 86 MB,
/// `bench/heif_decode.py`). Returns 0 on success.
int flipbook_heif_register_dav1d(void);

#endif
