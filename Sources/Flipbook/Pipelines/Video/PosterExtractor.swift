import CFFmpeg

/// Video posters: one decoded frame in memory at a time, scaled by libswscale straight to the output.
enum PosterExtractor {
    static func poster(_ input: MediaInput, request: ThumbnailRequest, options: PosterOptions) throws -> Image {
        let av = try LibAV.api()
        let reader = try VideoReader(input, request: request, maxCodedPixels: options.maxCodedPixels)
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
        let last = try Frame(), fallback = try Frame()
        var haveLast = false, haveFallback = false, scanned = 0, firstSeconds: Double?
        var chosen: Image?
        var candidates: [(signature: FrameSignature, image: Image)] = []
        let clock = ContinuousClock(), started = clock.now
        let budget = Duration.milliseconds(Int64(options.timeBudget * 1000))
        try reader.decode(from: target) { frame in
            if pastEnd {
                av.av_frame_unref(last.pointer)
                _ = av.av_frame_ref(last.pointer, frame)
                haveLast = true
                return false
            }
            let overBudget = clock.now - started > budget
            let t = reader.seconds(frame)
            if options.exact, let t, t + 1e-6 < target {
                if overBudget { throw FlipbookError(.limitExceeded, "the \(options.timeBudget) s time budget ran out before \(target) s") }
                return false
            }
            scanned += 1
            if firstSeconds == nil { firstSeconds = t }
            let overLimit = overBudget || scanned > options.maxFramesScanned
                || (t ?? 0) - (firstSeconds ?? 0) > options.maxSecondsScanned
            if overLimit, haveFallback || !candidates.isEmpty { return true }  // settle for the best so far
            guard options.skipUniformFrames || options.representative else {
                chosen = try reader.renderer.render(frame)
                return true
            }
            // Judge the decoded planes; scale only frames that are kept (or formats without planes).
            let (signature, image) = try FrameSignature.of(frame) { try reader.renderer.render(frame) }
            if signature.isUniform() {
                if !haveFallback { haveFallback = av.av_frame_ref(fallback.pointer, frame) >= 0 }
                return false
            }
            let picture = try image ?? reader.renderer.render(frame)
            guard options.representative else {
                chosen = picture
                return true
            }
            candidates.append((signature, picture))
            return candidates.count >= options.windowFrames
        }
        if let chosen { return chosen }
        if !candidates.isEmpty { return Self.mostRepresentative(candidates.map { ($0.signature, $0.image) }) }
        if pastEnd, haveLast { return try reader.renderer.render(last.pointer) }
        if haveFallback { return try reader.renderer.render(fallback.pointer) }
        throw FlipbookError(.corrupt, "no video frame could be decoded")
    }

    /// The candidate whose histogram is closest to the mean of all candidates' histograms.
    static func mostRepresentative(_ candidates: [(FrameSignature, Image)]) -> Image {
        let count = Double(candidates.count)
        var mean = [Double](repeating: 0, count: candidates[0].0.histogram.count)
        for (signature, _) in candidates {
            for (i, v) in signature.histogram.enumerated() where i < mean.count { mean[i] += v / count }
        }
        return candidates.min { $0.0.distance(to: mean) < $1.0.distance(to: mean) }!.1
    }

    /// The default video stream, never an attached picture (cover art).
    static func videoStream(_ format: FormatInput) throws -> Int {
        let av = try LibAV.api()
        let streams = format.streams
        func usable(_ i: Int) -> Bool {
            streams[i].pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
                && streams[i].pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
        }
        let best = Int(av.av_find_best_stream(format.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0))
        if best >= 0, usable(best) { return best }
        if let other = streams.indices.first(where: usable) { return other }
        if streams.contains(where: { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO }) {
            throw FlipbookError(.unsupported, "the only picture in this file is attached cover art, not video")
        }
        throw FlipbookError(.unsupported, "the file has no video stream (audio only?)")
    }

    /// Black, white or a single flat colour: no channel of the image spreads by 6 levels or more.
    static func isNearlyUniform(_ image: Image) -> Bool {
        image.width * image.height == 0 || FrameSignature(image: image).isUniform(threshold: 6)
    }
}
