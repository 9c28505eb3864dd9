/* The decode step alone, to measure libheif against libavif (avifdec) and to see what each output layout
 * costs: `make bench-heif-decode` builds it and bench/heif_decode.py runs it under GNU time.
 *
 *   heif_decode list                          AV1/HEVC decoders libheif has, highest priority first
 *   heif_decode FILE {rgb|planar} [DECODER]    decodes the primary image once as interleaved 8-bit RGB
 *                                             or in the layout libheif picks (planar RGB: libheif 1.15
 *                                             converts YCbCr to it internally), with DECODER (an id from
 *                                             `list`, e.g. dav1d or aom) or libheif's default;
 *                                             flipbook-dav1d is Flipbook's plugin (Sources/CHeifLoader,
 *                                             compiled in), registered first
 */
#include "flipbook_heif.h"

#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct heif_error e, const char* what) {
    fprintf(stderr, "%s: %s\n", what, e.message);
    return 1;
}

int main(int argc, char** argv) {
    if (argc >= 2 && strcmp(argv[1], "list") == 0) {
        const struct heif_decoder_descriptor* d[16];
        const enum heif_compression_format formats[] = {heif_compression_AV1, heif_compression_HEVC};
        for (int f = 0; f < 2; f++) {
            int n = heif_get_decoder_descriptors(formats[f], d, 16);
            for (int i = 0; i < n; i++)
                printf("%s\t%s\t%s\n", f == 0 ? "AV1" : "HEVC", heif_decoder_descriptor_get_id_name(d[i]),
                       heif_decoder_descriptor_get_name(d[i]));
        }
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: heif_decode list | heif_decode FILE {rgb|planar} [DECODER]\n");
        return 2;
    }
    int planar = strcmp(argv[2], "planar") == 0;
    if (argc > 3 && strcmp(argv[3], "flipbook-dav1d") == 0 && flipbook_heif_register_dav1d() != 0) {
        fprintf(stderr, "could not register flipbook-dav1d\n");
        return 1;
    }
    struct heif_context* ctx = heif_context_alloc();
    struct heif_error e = heif_context_read_from_file(ctx, argv[1], NULL);
    if (e.code) return fail(e, "read");
    struct heif_image_handle* handle;
    e = heif_context_get_primary_image_handle(ctx, &handle);
    if (e.code) return fail(e, "primary");
    struct heif_decoding_options* options = heif_decoding_options_alloc();
    if (argc > 3) options->decoder_id = argv[3];
    struct heif_image* image;
    e = heif_decode_image(handle, &image, planar ? heif_colorspace_undefined : heif_colorspace_RGB,
                          planar ? heif_chroma_undefined : heif_chroma_interleaved_RGB, options);
    if (e.code) return fail(e, "decode");
    printf("%dx%d colorspace %d chroma %d\n", heif_image_get_primary_width(image), heif_image_get_primary_height(image),
           heif_image_get_colorspace(image), heif_image_get_chroma_format(image));
    heif_image_release(image);
    heif_decoding_options_free(options);
    heif_image_handle_release(handle);
    heif_context_free(ctx);
    return 0;
}
