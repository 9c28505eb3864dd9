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

    /// Container and stream headers only (no decoding): size after rotation, codec, duration, frames.
    public func probe(_ input: MediaInput) throws -> MediaInfo {
        let av = try LibAV.api()
        let format = try FormatInput(source: input.source)
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
        if let desc = av.av_pix_fmt_desc_get(AVPixelFormat(rawValue: par.pointee.format)) {
            info.hasAlpha = desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
        }
        return info
    }

    /// A poster frame (see `PosterOptions`), upright and scaled to the request.
    public func thumbnail(_ input: MediaInput, _ request: ThumbnailRequest) throws -> Image {
        try PosterExtractor.poster(input, request: request, options: posterOptions)
    }
}
