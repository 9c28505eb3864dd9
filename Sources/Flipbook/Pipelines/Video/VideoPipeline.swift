import CFFmpeg

/// Videos (ISO-BMFF, Matroska/WebM): probe and poster frames through libavformat over the byte source.
public struct VideoPipeline: MediaPipeline {
    /// How posters are picked. Default: 10%, fast seek, near-uniform frames skipped.
    public var posterOptions: PosterOptions

    public init(posterOptions: PosterOptions = PosterOptions()) { self.posterOptions = posterOptions }
    public var name: String { "video" }
    public func accepts(_ type: MediaType) -> Bool { type.isVideo }

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
        let orientation = Self.orientation(of: stream)
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

    /// The stream's display matrix as the EXIF orientation that shows it upright: rotations by quarter
    /// turns, mirrored or not.
    static func orientation(of stream: UnsafeMutablePointer<AVStream>) -> Orientation {
        guard let av = try? LibAV.api() else { return .up }
        var size = 0
        guard let data = av.av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else { return .up }
        var matrix = data.withMemoryRebound(to: Int32.self, capacity: 9) { Array(UnsafeBufferPointer(start: $0, count: 9)) }
        return orientation(displayMatrix: &matrix)
    }

    /// libav's display matrix [a b u; c d v; x y w] maps a stored pixel (p, q) to (a p + c q, b p + d q).
    /// A negative determinant is a mirror: the matrix is then a rotation followed by a horizontal flip
    /// (av_display_matrix_flip negates column 0), so the rotation is read from the matrix with column 0
    /// negated back. Quarter turns clockwise, then the flip, are EXIF orientations 1-8.
    static func orientation(displayMatrix matrix: inout [Int32]) -> Orientation {
        guard matrix.count == 9, let av = try? LibAV.api() else { return .up }
        let determinant = Int64(matrix[0]) * Int64(matrix[4]) - Int64(matrix[1]) * Int64(matrix[3])
        let mirrored = determinant < 0
        if mirrored { for i in [0, 3, 6] { matrix[i] = 0 &- matrix[i] } }
        let ccw = matrix.withUnsafeBufferPointer { av.av_display_rotation_get($0.baseAddress!) }
        guard ccw.isFinite else { return .up }
        let clockwise = (Int((-ccw).rounded()) % 360 + 360) % 360
        switch (clockwise, mirrored) {
        case (90, false): return .right
        case (180, false): return .down
        case (270, false): return .left
        case (0, true): return .upMirrored
        case (90, true): return .leftMirrored  // transpose
        case (180, true): return .downMirrored  // a vertical flip
        case (270, true): return .rightMirrored  // transverse
        default: return .up
        }
    }
}
