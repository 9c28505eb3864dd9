/// GIF to looping, silent, timing-exact video. Frames come from `GIFDecoder` one at a time; each frame's
/// presentation time is its cumulative displayed GIF delay, in a millisecond time base, never resampled
/// to a constant rate. When every frame lasts alike (its block headers say so, `GIFDelayScan`), the time
/// base is one frame: the H.264 stream then carries its real rate, which lets ffmpeg derive packet
/// durations with B-frames (`FrameEncoder`); held-out GIFs 2-3% smaller (`bench/gif_sweep.py`). Output
/// goes to memory through a seekable custom AVIO (faststart included). Encoder
/// settings: `GIFTuning`'s by default, picked at the first frame from what `GIFContent` measures there (crf
/// 27, 26 or 25 for drawn, shaded or photographic pictures, chroma QP offset -4, thorough analysis), the
/// options' own crf otherwise;
/// x264's option-string SEI is left out (`X264InfoSEI`).
public enum GIFToVideo {
    /// Converts a GIF (or animated WebP or APNG, sniffed) in memory, reading and parsing the file once
    /// per encode. The limits (`options.decode.limits`) are checked from the headers: a GIF's canvas from
    /// its logical screen, its frame count and duration as each frame's header is read, before its pixels
    /// are decoded; a WebP's or APNG's all at once. Frames are decoded and encoded one at a time: memory is
    /// one canvas, the encoder's lookahead and the output file. CPU: one decode per frame and one encode
    /// per distinct frame, or per frame at a constant rate (times the encodes a quality floor or target asks
    /// for, see `CRFSearch`).
    public static func convert(_ source: any ByteSource, options: VideoConversionOptions = VideoConversionOptions()) throws
        -> VideoConversionResult
    {
        let type = MediaType.sniff(source)
        // A streamed GIF knows its delays only as its frames arrive: its block headers are read for them first
        // (`GIFDelayScan`: under 1% of the file). A WebP or APNG source has them all once opened.
        let gifDelays = type == .gif && options.codec == .h264
            ? GIFDelayScan.delays(source, maxFrames: options.decode.limits.maxFrames)?
                .map { GIFTiming.displayedMilliseconds(centiseconds: $0) }
            : nil
        let gifTiming = SampleTiming.planned(for: gifDelays ?? [])
        return try CRFSearch.run(options, type: type) { pass in
            func encode(planned: Bool) throws -> VideoConversionResult {
                let frames = try FrameSources.open(source, type: type, decode: options.decode, limits: options.decode.limits, streaming: true)
                let timing = planned ? type == .gif ? gifTiming : plannedTiming(frames.info, options: pass) : .variable
                return try convert(frames, inputBytes: source.count, options: pass, timing: timing,
                                   frameCount: gifDelays?.count)
            }
            do {
                return try encode(planned: true)
            } catch is OffPlannedTiming {  // the frames decoded disagree with the headers: timestamps as they come
                return try encode(planned: false)
            }
        }
    }

    /// The timing (`SampleTiming.planned`) for H.264 when `info` has every frame's duration (a streamed
    /// GIF's has none before decoding); `variable` otherwise.
    static func plannedTiming(_ info: AnimationInfo, options: VideoConversionOptions) -> SampleTiming {
        options.codec == .h264 && info.durationsMs.count == info.frameCount ? SampleTiming.planned(for: info.durationsMs) : .variable
    }

    /// Frames decoded with other durations, or another count, than the headers gave before decoding.
    struct OffPlannedTiming: Error {}

    /// Converts any `FrameSource` (GIF, animated WebP, APNG) with the same timing guarantees, in one encode
    /// at `options.crf` (a source is read once: the crf search of `minimumSSIM` / `targetSSIM` needs the
    /// `ByteSource` variant). The SSIM is measured when either is set. `inputBytes` is the source file's
    /// size, for the result's ratio.
    public static func convert(_ decoder: any FrameSource, inputBytes: Int, options: VideoConversionOptions = VideoConversionOptions())
        throws -> VideoConversionResult
    {
        // A streamed GIF knows no durations before its frames: it is converted at the frames' own timestamps.
        let info = decoder.info
        do {
            return try convert(decoder, inputBytes: inputBytes, options: options, timing: plannedTiming(info, options: options))
        } catch is OffPlannedTiming {
            throw FlipbookError(.corrupt, "\(info.type)'s frames do not last as its headers say")
        }
    }

    /// Converts with `timing` (`SampleTiming`): with a planned timing every frame is encoded and must start
    /// and end where the durations it was planned from say (`OffPlannedTiming` otherwise); with `variable`,
    /// at the frames' own timestamps, merging runs of identical frames into one. `frameCount`, the frames
    /// the file holds when known before decoding (a streamed GIF's from its block scan), sizes the encoding
    /// work for `GIFTuning`; by default the decoder's count.
    static func convert(_ decoder: any FrameSource, inputBytes: Int, options: VideoConversionOptions, timing: SampleTiming,
                        frameCount: Int? = nil) throws -> VideoConversionResult
    {
        // A streamed GIF's `info` grows as frames are decoded (a zero-size screen takes the first frame's
        // size; the loop count and transparency are final after the last frame): read it where it is used.
        // Rounded down to even: the encoder pads odd sides by one, which must not take a side over the limit.
        let maxSize = options.maxSize.map { max(2, $0 & ~1) }
        var encoder: FrameEncoder?
        var pending: (rgb: [UInt8], pts: Int)?
        var gifFrames = 0, encodedFrames = 0, endMs = 0, lastFrameMs = 0
        var poster: [UInt8]?
        var size = Size(width: 0, height: 0)
        // Flipbook's own settings are chosen at the first frame, from what it measures (`GIFContent`).
        let tuned = GIFTuning.applies(to: options)
        var settings = options
        // A streamed GIF's decoder has counted no frames yet (0: not known).
        let framesKnown = frameCount ?? decoder.info.frameCount

        func handle(_ frame: AnimationFrame, rgba: UnsafeBufferPointer<UInt8>, width: Int, height: Int) throws {
            if encoder == nil {
                size = Size(width: width, height: height)
                if tuned {
                    let content = GIFContent(rgba: rgba, width: width, height: height)
                    let pixelFrames = framesKnown > 0 ? width * height * framesKnown : nil
                    settings = GIFTuning.automatic(inputBytes: inputBytes, pixelFrames: pixelFrames, content: content)
                        .applied(to: options)
                }
                encoder = try FrameEncoder(width: width, height: height, options: settings, loopCount: decoder.info.loopCount,
                                           measure: options.minimumSSIM != nil || options.targetSSIM != nil, timing: timing)
            }
            switch timing {
            case .variable: break
            case .constant(let frameMs):
                if frame.durationMs != frameMs || frame.presentationTimeMs != gifFrames * frameMs { throw OffPlannedTiming() }
            case .averaged(let totalMs, let frames, _):
                if frame.presentationTimeMs != endMs || frame.presentationTimeMs + frame.durationMs > totalMs || gifFrames >= frames {
                    throw OffPlannedTiming()
                }
            }
            gifFrames += 1
            lastFrameMs = frame.presentationTimeMs
            endMs = frame.presentationTimeMs + frame.durationMs
            let rgb = encoder!.flatten(rgba)
            if let quality = options.posterQuality, poster == nil {
                poster = try TurboJPEG.encode(Image(width: width, height: height, channels: 3,
                                                    pixels: FrameEncoder.crop(rgb, paddedWidth: encoder!.paddedWidth, to: size)),
                                              quality: quality)
            }
            if let p = pending {
                // Identical to the frame on screen: it just stays longer (with a planned timing it is encoded
                // again, as a skipped frame of a few bytes).
                if !timing.encodesEveryFrame, p.rgb == rgb { return }
                try encoder!.encode(p.rgb, pts: p.pts, duration: frame.presentationTimeMs - p.pts)
                encodedFrames += 1
            }
            pending = (rgb, frame.presentationTimeMs)
        }

        try decoder.forEachFrame { meta, canvas in
            let info = decoder.info
            if let scaled = FrameScaling.scaled(canvas, info: info, maxPixelSize: maxSize) {
                try scaled.pixels.withUnsafeBufferPointer { try handle(meta, rgba: $0, width: scaled.width, height: scaled.height) }
            } else {
                try handle(meta, rgba: canvas, width: info.width, height: info.height)
            }
            return true
        }
        let info = decoder.info
        guard let enc = encoder, let last = pending else { throw FlipbookError(.corrupt, "\(info.type) has no frames to convert") }
        switch timing {  // fewer frames decoded than the headers promised
        case .variable: break
        case .constant: if gifFrames < 2 { throw OffPlannedTiming() }
        case .averaged(let totalMs, let frames, let samples):
            // Every frame, the last starting before the repeats of its picture.
            let fits = gifFrames == frames && lastFrameMs * samples < totalMs * frames
            if endMs != totalMs || !fits { throw OffPlannedTiming() }
        }
        if info.loopCount != enc.loopCount { try enc.setLoopCount(info.loopCount) }  // an extension after the first frame
        if encodedFrames == 0 {
            // One picture for the whole animation (every frame alike, or a single frame): a one-sample MP4
            // never leaves readyState 1 in Chromium, so it is written as two samples, split where the
            // animation's last frame starts (or, for a single frame, halfway).
            let split = lastFrameMs > last.pts ? lastFrameMs : last.pts + max(1, (endMs - last.pts) / 2)
            try enc.encode(last.rgb, pts: last.pts, duration: split - last.pts)
            encodedFrames += 1
            if split < endMs { try enc.encode(last.rgb, pts: split, duration: endMs - split); encodedFrames += 1 }
        } else {
            try enc.encode(last.rgb, pts: last.pts, duration: endMs - last.pts)
            encodedFrames += 1
        }
        let data = try enc.finish(endMs: endMs)
        return VideoConversionResult(
            data: data, inputBytes: inputBytes, durationMs: endMs, gifFrames: gifFrames, encodedFrames: encodedFrames,
            loopCount: info.loopCount, hadTransparency: info.hasAlpha, width: size.width, height: size.height,
            encodedWidth: enc.paddedWidth, encodedHeight: enc.paddedHeight, poster: poster, warnings: decoder.warnings,
            crf: settings.crf, x264Params: settings.codec == .h264 ? settings.x264Params : nil, measuredSSIM: enc.meter?.ssim)
    }
}

extension GIFToVideo {
    /// Converts and writes the video to `path` atomically (a temporary file beside it, then rename); the
    /// GIF itself is never replaced. Returns the same result as the in-memory conversion.
    @discardableResult
    public static func convert(_ source: any ByteSource, toPath path: String, options: VideoConversionOptions = VideoConversionOptions(),
                               protecting inputs: [String] = []) throws -> VideoConversionResult {
        let result = try convert(source, options: options)
        var protected = inputs
        if let file = source as? FileByteSource { protected.append(file.path) }
        try AtomicFile.write(result.data, to: path, protecting: protected)
        return result
    }
}
