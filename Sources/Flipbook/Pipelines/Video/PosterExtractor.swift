import CFFmpeg

/// Video posters: one decoded frame in memory at a time, scaled by libswscale straight to the output.
enum PosterExtractor {
    static func poster(_ input: MediaInput, request: ThumbnailRequest, options: PosterOptions) throws -> Image {
        let av = try LibAV.api()
        let reader = try VideoReader(input, request: request)
        var target = options.position.seconds(duration: reader.durationSeconds)
        // Deblocking smooths 4x4-16x16 block edges; at a quarter of the size or less they average away in the
        // thumbnail, so the fast path skips the loop filter (H.264 decodes ~12% faster, HEVC ~15%; mpv's
        // skiploopfilter trade). Not with --exact: those frames are predicted from many unfiltered ones.
        let par = reader.stream.pointee.codecpar.pointee
        let plan = ThumbnailPlan.make(source: Size(width: Int(par.width), height: Int(par.height)),
                                      maxPixelSize: request.maxPixelSize, fit: request.fit, upscale: request.upscale)
        if !options.exact, plan.scale <= 0.25 { reader.codec.pointer.pointee.skip_loop_filter = AVDISCARD_ALL }
        let pastEnd = reader.durationSeconds > 0 && target >= reader.durationSeconds
        if pastEnd { target = max(0, reader.durationSeconds - 2) }  // decode the tail and keep the last frame
        // The fast path's usual answer is the keyframe the seek lands on: decode just that one first (1080p
        // H.264 with B-frames: 8.5 MB less at the peak), judged by a selector of its own so the search below
        // starts afresh (its frame counts and fallback untouched) when the keyframe is uniform.
        if !options.exact, !options.representative, !pastEnd, let key = try reader.keyframe(at: target) {
            let quick = try PosterSelector(options: options, target: target, renderer: reader.renderer)
            if try quick.offer(key.pointer, seconds: nil), let poster = try quick.poster() { return poster }
        }
        let last = try Frame()
        var haveLast = false
        let selector = try PosterSelector(options: options, target: target, renderer: reader.renderer)
        try reader.decode(from: target) { frame in
            if pastEnd {
                av.av_frame_unref(last.pointer)
                _ = av.av_frame_ref(last.pointer, frame)
                haveLast = true
                return false
            }
            return try selector.offer(frame, seconds: reader.seconds(frame))
        }
        if let poster = try selector.poster() { return poster }
        if pastEnd, haveLast { return try reader.renderer.render(last.pointer) }
        throw FlipbookError(.corrupt, "no video frame could be decoded")
    }

    /// Black, white or a single flat colour: no channel of the image spreads by 6 levels or more.
    static func isNearlyUniform(_ image: Image) -> Bool {
        image.width * image.height == 0 || FrameSignature(image: image).isUniform(threshold: 6)
    }
}
