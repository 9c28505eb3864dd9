#ifndef FLIPBOOK_CPNG_H
#define FLIPBOOK_CPNG_H
#include <png.h>
#include <zlib.h>
#include <setjmp.h>
#include <string.h>

/// libpng's error callback must not return: it copies the message into the 256-byte buffer given as the
/// error pointer and jumps back to the fb_png_* call that set the jump target. Warnings are dropped.
static void fb_png_error(png_structp png, png_const_charp message) {
    char *buffer = (char *)png_get_error_ptr(png);
    if (buffer) { strncpy(buffer, message ? message : "libpng error", 255); buffer[255] = 0; }
    png_longjmp(png, 1);
}
static void fb_png_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

/// A read struct whose errors land in `error_buffer` (256 bytes, owned by the caller for its lifetime).
static inline png_structp fb_png_create_read(char *error_buffer) {
    return png_create_read_struct(PNG_LIBPNG_VER_STRING, error_buffer, fb_png_error, fb_png_warning);
}

/// libpng reports errors by longjmp to a jmp_buf set in the caller, which Swift cannot do: each libpng
/// call that may fail goes through one of these, which sets the jump target and returns 0 on success,
/// -1 after libpng's error handler ran (the message is then in the error callback's state).
static inline int fb_png_read_info(png_structp png, png_infop info) {
    if (setjmp(png_jmpbuf(png))) return -1;
    png_read_info(png, info);
    return 0;
}
static inline int fb_png_read_update_info(png_structp png, png_infop info) {
    if (setjmp(png_jmpbuf(png))) return -1;
    png_read_update_info(png, info);
    return 0;
}
static inline int fb_png_read_row(png_structp png, png_bytep row) {
    if (setjmp(png_jmpbuf(png))) return -1;
    png_read_row(png, row, NULL);
    return 0;
}
/// Adam7: the whole image at once into `rows` (one pointer per row).
static inline int fb_png_read_image(png_structp png, png_bytepp rows) {
    if (setjmp(png_jmpbuf(png))) return -1;
    png_read_image(png, rows);
    return 0;
}
/// The transformations Flipbook wants (8-bit RGB or RGBA out of any colour type and depth), in one call
/// so their setjmp covers them all.
static inline int fb_png_set_rgb8(png_structp png, png_infop info) {
    if (setjmp(png_jmpbuf(png))) return -1;
    png_set_expand(png);
    png_set_scale_16(png);
    png_set_gray_to_rgb(png);
    return 0;
}
static inline int fb_png_set_interlace_handling(png_structp png) {
    if (setjmp(png_jmpbuf(png))) return -1;
    return png_set_interlace_handling(png);
}
#endif
