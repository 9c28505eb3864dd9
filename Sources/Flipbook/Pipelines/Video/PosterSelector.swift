import CFFmpeg

/// Which decoded frame becomes the poster, decided in one place for `PosterExtractor` and `VideoBundle`.
/// Frames are offered in display order; near-uniform ones (black, white, one flat colour) are passed over
/// (the first is kept as a fallback), and in representative mode a window of good frames is gathered and
/// the one closest to their mean histogram wins. The scan stops at `PosterOptions`' frame, time and
/// wall-clock limits, settling for the best frame so far. Memory: the fallback frame and the rendered
/// candidates (one, or `windowFrames` in representative mode).
final class PosterSelector {
    let options: PosterOptions
    /// With `options.exact`, frames before this time (seconds) are decoded but not considered.
    let target: Double
    private let renderer: FrameRenderer
    private let fallback: Frame
    private var haveFallback = false
    /// With `options.exact`, the latest frame before `target`: when the stream ends first (a time between
    /// the last frame's start and the container's end, as 99% often is), that frame is the one on screen.
    private let before: Frame
    private var haveBefore = false
    private var scanned = 0
    private var firstSeconds: Double?
    private var chosen: Image?
    private var candidates: [(signature: FrameSignature, image: Image)] = []
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private let budget: Duration

    /// The wall-clock budget starts now.
    init(options: PosterOptions, target: Double, renderer: FrameRenderer) throws {
        self.options = options
        self.target = target
        self.renderer = renderer
        fallback = try Frame()
        before = try Frame()
        started = clock.now
        budget = Duration.milliseconds(Int64(options.timeBudget * 1000))
    }

    /// Offers the next decoded frame, shown at `t` seconds (nil if unknown). Returns true once the poster
    /// is decided (`poster()` then has it); false to be offered the next frame.
    func offer(_ frame: UnsafeMutablePointer<AVFrame>, seconds t: Double?) throws -> Bool {
        let av = try LibAV.api()
        let overBudget = clock.now - started > budget
        if options.exact, let t, t + 1e-6 < target {
            if overBudget { throw FlipbookError(.limitExceeded, "the \(options.timeBudget) s time budget ran out before \(target) s") }
            av.av_frame_unref(before.pointer)
            haveBefore = av.av_frame_ref(before.pointer, frame) >= 0
            return false
        }
        scanned += 1
        if firstSeconds == nil { firstSeconds = t }
        let overLimit = overBudget || scanned > options.maxFramesScanned
            || (t ?? 0) - (firstSeconds ?? 0) > options.maxSecondsScanned
        if overLimit, haveFallback || !candidates.isEmpty { return true }  // settle for the best so far
        guard options.skipUniformFrames || options.representative else {
            chosen = try renderer.render(frame)
            return true
        }
        // Judge the decoded planes; scale only frames that are kept (or formats without planes).
        let (signature, image) = try FrameSignature.of(frame) { try renderer.render(frame) }
        if signature.isUniform() {
            if !haveFallback { haveFallback = av.av_frame_ref(fallback.pointer, frame) >= 0 }
            return false
        }
        let picture = try image ?? renderer.render(frame)
        guard options.representative else {
            chosen = picture
            return true
        }
        candidates.append((signature, picture))
        return candidates.count >= options.windowFrames
    }

    /// The poster so far: the chosen frame, else the most representative candidate, else the first
    /// near-uniform frame, else (exact, the stream ended before the target) the last frame before it; nil
    /// if no frame was decoded.
    func poster() throws -> Image? {
        if let chosen { return chosen }
        if !candidates.isEmpty { return Self.mostRepresentative(candidates.map { ($0.signature, $0.image) }) }
        if haveFallback { return try renderer.render(fallback.pointer) }
        if haveBefore { return try renderer.render(before.pointer) }
        return nil
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
}
