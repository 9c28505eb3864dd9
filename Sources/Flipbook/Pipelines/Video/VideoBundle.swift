/// Poster, storyboard and preview from one open file, one decoder and one forward pass: the times every
/// part needs are visited in order, each decoded frame goes to every part that wants it, and the reader
/// seeks (forward only) only across gaps longer than `seekGap`.
public struct VideoBundle: Sendable {
    /// The parts asked for in the request; nil for those not asked for.
    public var poster: Image?
    /// The storyboard (cues and sheets), if asked for.
    public var storyboard: Storyboard?
    /// The hover preview, if asked for.
    public var preview: VideoPreview.Result?
    /// Frames decoded and seeks made, for comparing with separate runs.
    public var framesDecoded = 0
    /// Seeks made in the one pass.
    public var seeks = 0

    /// Decoding on is cheaper than seeking when the next wanted time is this close (seconds).
    static let seekGap = 1.0

    /// Makes every part `request` asks for in one forward pass over the video. Memory: one decoded frame
    /// (plus one held for tiles and one poster fallback), the tiles and the preview encoder. Throws
    /// `.invalidArgument` if nothing is asked for, `.corrupt` if no frame decodes.
    public static func make(_ input: MediaInput, _ request: VideoBundleRequest) throws -> VideoBundle {
        guard request.poster != nil || request.storyboard != nil || request.preview != nil else {
            throw FlipbookError(.invalidArgument, "ask for a poster, a storyboard or a preview")
        }
        try request.storyboard?.validate()
        try request.preview?.validate()
        let reader = try VideoReader.spanning(input, maxPixelSize: request.poster?.request.maxPixelSize ?? 256, for: "bundles")
        let duration = reader.durationSeconds
        func renderer(_ request: ThumbnailRequest) throws -> FrameRenderer {
            try FrameRenderer(format: reader.format, stream: reader.stream, request: request)
        }
        var result = VideoBundle()

        // The poster: chosen by PosterSelector, as PosterExtractor chooses it, from the frames at or after its
        // position (the pass decodes every frame it passes, so this is --exact's frame, or a later one if that
        // is blank). The selector, and its time budget, start at the first such frame.
        let posterRenderer = try request.poster.map { try renderer($0.request) }
        var posterAt: Double? = request.poster.map { min($0.options.position.seconds(duration: duration), max(0, duration - 0.001)) }
        var posterSelector: PosterSelector?
        let lastFrame = try Frame()
        var haveLast = false

        // The storyboard: the frame on screen at each tile's time (the last one at or before it), as
        // Storyboard.make picks it; each frame scaled once however many tiles show it.
        let tileRenderer = try request.storyboard.map { try renderer(ThumbnailRequest(maxPixelSize: $0.tileSize)) }
        let plan = request.storyboard.map { Storyboard.Plan(durationSeconds: duration, options: $0) }
        var tiles: [Image] = []
        var tileOfLast: Image?, lastIsPrevious = false

        // The preview: the same segment rules as VideoPreview.make.
        let previewRenderer = try request.preview.map { try renderer(ThumbnailRequest(maxPixelSize: $0.size)) }
        var timeline = request.preview.map { PreviewTimeline(durationSeconds: duration, options: $0, minimumFrameMs: $0.format.minimumFrameMs) }
        var sink = try request.preview.map { try VideoPreview.makeSink($0) }

        func nextWanted() -> Double? {
            var wanted: [Double] = []
            if let posterAt { wanted.append(posterAt) }
            if let plan, tiles.count < plan.starts.count { wanted.append(Double(plan.starts[tiles.count]) / 1000) }
            if let segment = timeline?.pending { wanted.append(segment.start) }
            return wanted.min()
        }

        let av = try LibAV.api()
        var cursor: Double?, lastSeek: Double?
        while let wanted = nextWanted() {
            // Seek across a long gap, once per target: a seek lands on the keyframe before it, maybe long before.
            if cursor == nil || (wanted > cursor! + seekGap && wanted > lastSeek!) {
                try reader.seek(to: wanted)
                lastSeek = wanted
                result.seeks += 1
                timeline?.restartSegment()
                lastIsPrevious = false
                tileOfLast = nil
            }
            guard let decoded = try reader.nextFrame() else { break }
            let frame = decoded.pointer  // borrowed for this pass of the loop; `decoded` owns it
            result.framesDecoded += 1
            let t = reader.seconds(frame) ?? (cursor ?? 0)
            cursor = max(cursor ?? t, t)
            if let plan, let tileRenderer {
                // Tiles before this frame show the one before it; a tile at this frame's time waits for the next.
                var tileOfThis: Image?
                while tiles.count < plan.starts.count, Double(plan.starts[tiles.count]) / 1000 + 1e-6 < t {
                    if lastIsPrevious {
                        tileOfLast = try tileOfLast ?? tileRenderer.render(lastFrame.pointer)
                        tiles.append(tileOfLast!)
                    } else {
                        tileOfThis = try tileOfThis ?? tileRenderer.render(frame)
                        tiles.append(tileOfThis!)
                    }
                }
                tileOfLast = tileOfThis
            }
            av.av_frame_unref(lastFrame.pointer)
            haveLast = av.av_frame_ref(lastFrame.pointer, frame) >= 0
            lastIsPrevious = haveLast

            if let at = posterAt, let poster = request.poster, let posterRenderer, t + 1e-6 >= at {
                let selector = try posterSelector ?? PosterSelector(options: poster.options, target: at, renderer: posterRenderer)
                posterSelector = selector
                if try selector.offer(frame, seconds: t) {
                    result.poster = try selector.poster()
                    posterAt = nil
                }
            }
            if timeline != nil, let previewRenderer, let ms = timeline!.offer(t) {
                try sink!.add(try previewRenderer.render(frame), atMs: ms)
            }
        }

        // The stream ended before every want: the last frame stands in, as the standalone makers do.
        if posterAt != nil, let posterRenderer {
            result.poster = try posterSelector?.poster()
            if result.poster == nil, haveLast { result.poster = try posterRenderer.render(lastFrame.pointer) }
        }
        if let plan, let options = request.storyboard {
            if tiles.count < plan.starts.count, haveLast, let tileRenderer {
                let tile = try tileOfLast ?? tileRenderer.render(lastFrame.pointer)
                while tiles.count < plan.starts.count { tiles.append(tile) }
            }
            while tiles.count < plan.starts.count, let previous = tiles.last { tiles.append(previous) }
            if tiles.isEmpty, haveLast, let tileRenderer { tiles = Array(repeating: try tileRenderer.render(lastFrame.pointer), count: plan.starts.count) }
            result.storyboard = try Storyboard.assemble(tiles, plan: plan, options: options)
        }
        if let timeline, var made = sink, let options = request.preview {
            guard timeline.lastMs != nil else { throw FlipbookError(.corrupt, "no video frame could be decoded") }
            let file = try made.finish(endMs: timeline.endMs)
            result.preview = VideoPreview.Result(data: file.data, format: options.format, durationMs: file.durationMs, frames: file.frames,
                                                 width: file.size.width, height: file.size.height)
        }
        if request.poster != nil, result.poster == nil { throw FlipbookError(.corrupt, "no video frame could be decoded") }
        return result
    }
}
