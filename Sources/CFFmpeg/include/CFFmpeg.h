#ifndef FLIPBOOK_CFFMPEG_H
#define FLIPBOOK_CFFMPEG_H

// Headers of libavformat, libavcodec, libavutil and libswscale. Nothing here is linked: every function
// Flipbook calls is reached through the table below, which fb_av_load() fills with dlopen/dlsym. Each
// entry is declared with __typeof__ of the real prototype, so a signature mismatch is a compile error.

#include <stdint.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/cpu.h>
#include <libavutil/display.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

/// X-macro list of every libav function Flipbook uses: X(library, function).
#define FB_AV_FUNCTIONS(X) \
    X(avutil, av_log_set_level) \
    X(avutil, av_log_get_level) \
    X(avutil, av_log_set_callback) \
    X(avutil, av_log_default_callback) \
    X(avutil, av_strerror) \
    X(avutil, av_malloc) \
    X(avutil, av_free) \
    X(avutil, av_freep) \
    X(avutil, av_frame_alloc) \
    X(avutil, av_frame_free) \
    X(avutil, av_frame_unref) \
    X(avutil, av_frame_get_buffer) \
    X(avutil, av_dict_get) \
    X(avutil, av_dict_set) \
    X(avutil, av_dict_free) \
    X(avutil, av_opt_set) \
    X(avutil, av_opt_set_int) \
    X(avutil, av_opt_set_double) \
    X(avutil, av_display_rotation_get) \
    X(avutil, av_pix_fmt_desc_get) \
    X(avutil, av_get_pix_fmt_name) \
    X(avutil, av_frame_make_writable) \
    X(avutil, av_frame_ref) \
    X(avutil, av_frame_get_side_data) \
    X(avutil, av_rescale_q) \
    X(avutil, av_get_cpu_flags) \
    X(avcodec, av_packet_alloc) \
    X(avcodec, av_packet_free) \
    X(avcodec, av_packet_unref) \
    X(avcodec, av_packet_move_ref) \
    X(avcodec, av_new_packet) \
    X(avcodec, av_packet_make_writable) \
    X(avcodec, avcodec_find_decoder) \
    X(avcodec, avcodec_find_encoder) \
    X(avcodec, avcodec_find_encoder_by_name) \
    X(avcodec, avcodec_alloc_context3) \
    X(avcodec, avcodec_free_context) \
    X(avcodec, avcodec_parameters_to_context) \
    X(avcodec, avcodec_open2) \
    X(avcodec, avcodec_send_packet) \
    X(avcodec, avcodec_receive_frame) \
    X(avcodec, avcodec_send_frame) \
    X(avcodec, avcodec_receive_packet) \
    X(avcodec, avcodec_flush_buffers) \
    X(avcodec, avcodec_get_name) \
    X(avcodec, avcodec_parameters_from_context) \
    X(avcodec, av_packet_rescale_ts) \
    X(avformat, avformat_alloc_context) \
    X(avformat, avformat_free_context) \
    X(avformat, avformat_open_input) \
    X(avformat, avformat_close_input) \
    X(avformat, avformat_find_stream_info) \
    X(avformat, av_find_best_stream) \
    X(avformat, av_read_frame) \
    X(avformat, av_seek_frame) \
    X(avformat, avformat_seek_file) \
    X(avformat, av_stream_get_side_data) \
    X(avformat, av_guess_sample_aspect_ratio) \
    X(avformat, avio_alloc_context) \
    X(avformat, avio_context_free) \
    X(avformat, avformat_alloc_output_context2) \
    X(avformat, avformat_new_stream) \
    X(avformat, avformat_write_header) \
    X(avformat, av_interleaved_write_frame) \
    X(avformat, av_write_frame) \
    X(avformat, av_write_trailer) \
    X(swscale, sws_getContext) \
    X(swscale, sws_freeContext) \
    X(swscale, sws_scale) \
    X(swscale, sws_setColorspaceDetails) \
    X(swscale, sws_getCoefficients)

#define FB_AV_FIELD(lib, name) __typeof__(name) *name;
/// The resolved entry points. Valid only after fb_av_load() returned NULL.
typedef struct FBAVTable {
    FB_AV_FUNCTIONS(FB_AV_FIELD)
} FBAVTable;
#undef FB_AV_FIELD

/// Opens the four libraries (by the soname the headers were built for) and resolves the table, once per
/// process (thread-safe). Returns NULL on success, or a static message naming what could not be loaded.
const char *fb_av_load(void);

/// Asks for libav's process-wide log level to be AV_LOG_QUIET, now if the libraries are loaded, else when
/// they load. For executables only: a library must leave the host's libav logging as it is.
void fb_av_quiet_logs(void);

/// The table; its entries are NULL until fb_av_load() has succeeded.
const FBAVTable *fb_av_table(void);

// ---- Shims for function-like macros and constants Swift cannot import ----

/// AVERROR(e): libav's negative error code for a POSIX errno.
static inline int fb_averror(int posixErrno) { return AVERROR(posixErrno); }
/// AVERROR_EOF, a macro built from FFERRTAG.
static inline int fb_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR_INVALIDDATA.
static inline int fb_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
/// AVERROR(EAGAIN), returned by the send/receive API when it needs the other side.
static inline int fb_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AV_NOPTS_VALUE is an INT64_C() expression.
static inline int64_t fb_av_nopts_value(void) { return AV_NOPTS_VALUE; }
/// AVSEEK_SIZE: the whence value libav passes to ask a custom AVIO for the stream size.
static inline int fb_avseek_size(void) { return AVSEEK_SIZE; }
/// AV_INPUT_BUFFER_PADDING_SIZE zero bytes must follow packet data handed to decoders.
static inline int fb_av_input_buffer_padding_size(void) { return AV_INPUT_BUFFER_PADDING_SIZE; }
/// MKTAG('h','v','c','1'): the HEVC sample entry Apple players require.
static inline unsigned int fb_tag_hvc1(void) { return MKTAG('h', 'v', 'c', '1'); }
/// AV_CPU_FLAG_AVX512: libavutil saw AVX-512 (F, CD, BW, DQ, VL) and the OS saves its registers.
static inline int fb_av_cpu_flag_avx512(void) { return AV_CPU_FLAG_AVX512; }
/// AV_TIME_BASE (microseconds), for AVFormatContext.duration.
static inline int fb_av_time_base(void) { return AV_TIME_BASE; }
/// AV_PIX_FMT_RGB32: packed ARGB in one native-endian 32-bit word (BGRA in memory on little-endian).
static inline enum AVPixelFormat fb_pix_fmt_rgb32(void) { return AV_PIX_FMT_RGB32; }

#endif
