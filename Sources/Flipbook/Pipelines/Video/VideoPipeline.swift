import CFFmpeg

/// Videos (ISO-BMFF, Matroska/WebM): probe and poster frames through libavformat over the byte source.
public struct VideoPipeline: MediaPipeline {
    /// How posters are picked. Default: 10%, fast seek, near-uniform frames skipped.
    public var posterOptions: PosterOptions

    /// A video pipeline picking posters with `posterOptions` (default `PosterOptions()`).
    public init(posterOptions: PosterOptions = PosterOptions()) { self.posterOptions = posterOptions }
    /// "video".
    public var name: String { "video" }
    /// MP4, MOV, M4V, Matroska and WebM.
    public func accepts(_ type: MediaType) -> Bool { type.isVideo }

    /// Container and stream headers only: size after rotation, codec, duration, frames, alpha. It decodes
    /// ahead (`avformat_find_stream_info`) only when the headers leave one of those out (`needsDecoding`).
    /// Decoding ahead opens the stream's decoder for every file (an H.264 one zeroes a 766 KB context), and
    /// it was most of a probe's cost: `flipbook ingest --recipe probe --jobs 2` over the bench's 2,000 files
    /// took 1,476-1,554 ms of CPU with it and 484-530 ms without, with the same results for every video in
    /// the corpus but a corrupt one (`hasAlpha` false instead of null).
    public func probe(_ input: MediaInput) throws -> MediaInfo {
        let av = try LibAV.api()
        let format = try FormatInput(source: input.source, probeStreams: false)
        if Self.needsDecoding(format) { try format.probeStreams() }
        var info = MediaInfo(type: input.type)
        let duration = format.pointer.pointee.duration
        if duration != LibAV.noPTS, duration > 0 { info.durationMs = Int(duration / 1000) }
        let index = av.av_find_best_stream(format.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0 else { return info }  // audio-only: no picture facts to report
        let stream = format.streams[Int(index)]
        let par = stream.pointee.codecpar!
        let orientation = Orientation(displayMatrix: FormatInput.displayMatrix(of: stream))
        let w = Int(par.pointee.width), h = Int(par.pointee.height)
        info.width = orientation.swapsAxes ? h : w
        info.height = orientation.swapsAxes ? w : h
        info.orientation = orientation.rawValue
        info.codec = LibAV.codecName(par.pointee.codec_id)
        if stream.pointee.nb_frames > 0 { info.frames = Int(stream.pointee.nb_frames) }
        // WebM's AlphaMode first: the pixel format says opaque (and posters and previews, decoded natively, are).
        if FormatInput.carriesAlphaAlongside(stream) {
            info.hasAlpha = true
        } else if let desc = av.av_pix_fmt_desc_get(AVPixelFormat(rawValue: par.pointee.format)) {
            info.hasAlpha = desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
        } else if Self.opaqueCodecs.contains(par.pointee.codec_id) {
            info.hasAlpha = false
        }
        return info
    }

    /// Codecs whose libavcodec decoders (FFmpeg 5.1, Debian 12) never give a picture with alpha: when the
    /// container does not name the pixel format, probe need not decode to know there is no alpha. (VP8 and
    /// VP9 carry alpha in WebM only beside the stream, `FormatInput.carriesAlphaAlongside`; HEVC's alpha
    /// layer is not decoded before FFmpeg 7.1.)
    static let opaqueCodecs: Set<AVCodecID> = [AV_CODEC_ID_H264, AV_CODEC_ID_HEVC, AV_CODEC_ID_AV1, AV_CODEC_ID_VP8,
                                               AV_CODEC_ID_VP9, AV_CODEC_ID_MPEG4, AV_CODEC_ID_MPEG1VIDEO,
                                               AV_CODEC_ID_MPEG2VIDEO, AV_CODEC_ID_H263, AV_CODEC_ID_THEORA]

    /// Whether the headers leave out something `probe` reports: the container's duration, or the one video
    /// stream's size, or its pixel format for a codec that may carry alpha. Files with several video streams
    /// are decoded ahead too, since which one is "best" may depend on what decoding finds.
    static func needsDecoding(_ format: FormatInput) -> Bool {
        if format.pointer.pointee.duration == LibAV.noPTS { return true }
        let video = format.streams.filter { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO }
        guard video.count == 1, let par = video[0].pointee.codecpar else { return true }
        if par.pointee.width <= 0 || par.pointee.height <= 0 { return true }
        return par.pointee.format < 0 && !opaqueCodecs.contains(par.pointee.codec_id)
    }

    /// A poster frame (see `PosterOptions`), upright and scaled to the request.
    public func thumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
        try PosterExtractor.poster(input, request: request, options: posterOptions)
    }
}
