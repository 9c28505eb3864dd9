#ifndef FLIPBOOK_CJPEG_H
#define FLIPBOOK_CJPEG_H
// libjpeg-turbo's libjpeg API (Debian's libjpeg62-turbo), for decoding a JPEG streamed from its source in
// small reads, so a thumbnail's memory follows the decoded (DCT-scaled) image and not the file. TurboJPEG
// (CTurboJPEG) takes the whole file in one buffer. libjpeg reports errors by longjmp and reads through a
// source manager of C callbacks, neither of which Swift can write: this shim owns both.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

/// Reads up to `length` bytes at `offset` of the source into `buffer`; returns how many (0 at the end or on
/// failure, which the caller records itself). Called from libjpeg's C frames: it must not throw or jump.
typedef size_t (*fb_jpeg_read_fn)(void *context, unsigned char *buffer, size_t length, size_t offset);

/// One decompressor, its error handler, its source manager and its read buffer, allocated together.
typedef struct fb_jpeg_reader {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr error;
    struct jpeg_source_mgr source;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    char warning[JMSG_LENGTH_MAX];
    int warnings;
    int ended_early;
    fb_jpeg_read_fn read;
    void *context;
    size_t offset;
    unsigned char *buffer;
    size_t buffer_size;
} fb_jpeg_reader;

static void fb_jpeg_error_exit(j_common_ptr cinfo) {
    fb_jpeg_reader *r = (fb_jpeg_reader *)cinfo->client_data;
    (*cinfo->err->format_message)(cinfo, r->message);
    longjmp(r->jump, 1);
}

/// Warnings (corrupt data libjpeg recovered from) are kept, the first one's text with them; trace messages dropped.
static void fb_jpeg_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return;
    fb_jpeg_reader *r = (fb_jpeg_reader *)cinfo->client_data;
    if (r->warnings == 0) (*cinfo->err->format_message)(cinfo, r->warning);
    r->warnings++;
    cinfo->err->num_warnings++;
}

/// Progressive files with absurd scan counts are refused, as TurboJPEG's TJFLAG_LIMITSCANS does (500).
static void fb_jpeg_progress(j_common_ptr cinfo) {
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (cinfo->is_decompressor && d->progressive_mode && d->input_scan_number > 500) {
        fb_jpeg_reader *r = (fb_jpeg_reader *)cinfo->client_data;
        snprintf(r->message, sizeof r->message, "progressive JPEG has more than 500 scans");
        longjmp(r->jump, 1);
    }
}

static void fb_jpeg_source_init(j_decompress_ptr cinfo) { (void)cinfo; }
static void fb_jpeg_source_term(j_decompress_ptr cinfo) { (void)cinfo; }

/// At the end of the data, a fake EOI marker and a warning, as libjpeg's own stdio source does.
static boolean fb_jpeg_source_fill(j_decompress_ptr cinfo) {
    fb_jpeg_reader *r = (fb_jpeg_reader *)cinfo->client_data;
    size_t n = r->read(r->context, r->buffer, r->buffer_size, r->offset);
    if (n == 0 || n > r->buffer_size) {
        WARNMS(cinfo, JWRN_JPEG_EOF);
        r->ended_early = 1;
        r->buffer[0] = 0xFF;
        r->buffer[1] = JPEG_EOI;
        n = 2;
    } else {
        r->offset += n;
    }
    r->source.next_input_byte = r->buffer;
    r->source.bytes_in_buffer = n;
    return TRUE;
}

static void fb_jpeg_source_skip(j_decompress_ptr cinfo, long count) {
    fb_jpeg_reader *r = (fb_jpeg_reader *)cinfo->client_data;
    if (count <= 0) return;
    if ((size_t)count <= r->source.bytes_in_buffer) {
        r->source.next_input_byte += count;
        r->source.bytes_in_buffer -= (size_t)count;
        return;
    }
    r->offset += (size_t)count - r->source.bytes_in_buffer;
    r->source.next_input_byte = r->buffer;
    r->source.bytes_in_buffer = 0;
}

/// A reader over `read(context, ...)` with a `buffer_size`-byte read buffer; NULL if out of memory.
static inline fb_jpeg_reader *fb_jpeg_create(fb_jpeg_read_fn read, void *context, size_t buffer_size) {
    if (buffer_size < 4096) buffer_size = 4096;
    fb_jpeg_reader *r = (fb_jpeg_reader *)calloc(1, sizeof(fb_jpeg_reader));
    if (!r) return NULL;
    r->buffer = (unsigned char *)malloc(buffer_size);
    if (!r->buffer) { free(r); return NULL; }
    r->buffer_size = buffer_size;
    r->read = read;
    r->context = context;
    r->cinfo.err = jpeg_std_error(&r->error);
    r->error.error_exit = fb_jpeg_error_exit;
    r->error.emit_message = fb_jpeg_emit_message;
    r->cinfo.client_data = r;
    if (setjmp(r->jump)) { free(r->buffer); free(r); return NULL; }
    jpeg_create_decompress(&r->cinfo);
    r->source.init_source = fb_jpeg_source_init;
    r->source.fill_input_buffer = fb_jpeg_source_fill;
    r->source.skip_input_data = fb_jpeg_source_skip;
    r->source.resync_to_restart = jpeg_resync_to_restart;
    r->source.term_source = fb_jpeg_source_term;
    r->cinfo.src = &r->source;
    r->progress.progress_monitor = fb_jpeg_progress;
    r->cinfo.progress = &r->progress;
    return r;
}

static inline void fb_jpeg_destroy(fb_jpeg_reader *r) {
    if (!r) return;
    jpeg_destroy_decompress(&r->cinfo);
    free(r->buffer);
    free(r);
}

/// jpeg_read_header (markers up to the first scan): 0, or -1 with the message in `r->message`.
static inline int fb_jpeg_read_header(fb_jpeg_reader *r) {
    if (setjmp(r->jump)) return -1;
    jpeg_read_header(&r->cinfo, TRUE);
    return 0;
}

/// Starts decoding scaled by `scale_num`/8 into `out_space` (JCS_RGB or JCS_CMYK): 0, or -1.
static inline int fb_jpeg_start(fb_jpeg_reader *r, unsigned int scale_num, unsigned int scale_denom, J_COLOR_SPACE out_space) {
    if (setjmp(r->jump)) return -1;
    r->cinfo.scale_num = scale_num;
    r->cinfo.scale_denom = scale_denom;
    r->cinfo.out_color_space = out_space;
    r->cinfo.dct_method = JDCT_ISLOW;
    r->cinfo.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&r->cinfo);
    return 0;
}

/// Reads up to `count` scanlines into `rows`; returns how many (0 only at the end), or -1.
static inline int fb_jpeg_read_rows(fb_jpeg_reader *r, unsigned char **rows, int count) {
    if (setjmp(r->jump)) return -1;
    int done = 0;
    while (done < count && r->cinfo.output_scanline < r->cinfo.output_height) {
        done += (int)jpeg_read_scanlines(&r->cinfo, rows + done, (JDIMENSION)(count - done));
    }
    return done;
}
#endif
