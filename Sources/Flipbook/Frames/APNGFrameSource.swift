/// APNG as a `FrameSource`. Our own chunk reader (`APNGStructure`) finds each frame's fcTL and data;
/// each frame's image is decoded by libavcodec's PNG decoder (as a standalone PNG of the frame's size),
/// then composited here by the APNG rules, the ones browsers and Pillow follow:
/// - the IDAT image is the first frame only if an fcTL precedes it, else it is the default image, shown by
///   viewers without APNG support and not part of the animation;
/// - the canvas starts fully transparent; blend SOURCE replaces the frame's rectangle, OVER composites onto it;
/// - dispose NONE keeps the frame, BACKGROUND clears its rectangle to transparent, PREVIOUS restores the
///   rectangle as it was before the frame (on the first frame PREVIOUS acts as BACKGROUND).
/// Memory: the canvas, a saved copy of one rectangle for PREVIOUS, and one decoded frame.
final class APNGFrameSource: FrameSource {
    let info: AnimationInfo
    private(set) var warnings: [String] = []
    private let source: any ByteSource
    private let structure: APNGStructure
    private let strict: Bool
    private let isCancelled: (@Sendable () -> Bool)?

    /// Scans the chunk headers and checks `limits` (canvas, frames, duration) before allocating anything.
    init(source: any ByteSource, limits: Limits = Limits(), strict: Bool = false,
                isCancelled: (@Sendable () -> Bool)? = nil) throws {
        self.source = source
        self.strict = strict
        self.isCancelled = isCancelled
        var s = try APNGStructure.scan(source, maxFrames: limits.maxFrames)
        if let truncation = s.truncation {
            if strict || s.frames.isEmpty { throw FlipbookError(.truncated, "APNG is incomplete: \(truncation)") }
            warnings.append("APNG is incomplete (\(truncation)); converting the \(s.frames.count) complete frames")
        }
        guard !s.frames.isEmpty else { throw FlipbookError(.corrupt, "APNG has an acTL chunk but no frames") }
        if s.declaredFrames != s.frames.count {
            if strict { throw FlipbookError(.corrupt, "APNG declares \(s.declaredFrames) frames but holds \(s.frames.count)") }
            // Browsers stop at acTL's count; extra fcTLs are ignored.
            if s.declaredFrames > 0, s.declaredFrames < s.frames.count { s.frames.removeLast(s.frames.count - s.declaredFrames) }
        }
        for (k, f) in s.frames.enumerated() {
            guard f.width > 0, f.height > 0, f.x >= 0, f.y >= 0, f.x + f.width <= s.width, f.y + f.height <= s.height else {
                throw FlipbookError(.corrupt, "APNG frame \(k) (\(f.width)x\(f.height) at \(f.x),\(f.y)) is outside the \(s.width)x\(s.height) canvas")
            }
            guard !f.data.isEmpty else { throw FlipbookError(.corrupt, "APNG frame \(k) has no image data") }
        }
        structure = s
        let durations = s.frames.map { AnimationTiming.displayedMilliseconds($0.delayMs) }
        let first = s.frames[0]
        let covers = first.x == 0 && first.y == 0 && first.width == s.width && first.height == s.height
        info = AnimationInfo(type: .apng, width: s.width, height: s.height, frameCount: s.frames.count, durationsMs: durations,
                             durationMs: durations.reduce(0, +), loopCount: s.plays,
                             hasAlpha: s.hasTransparency || !covers, codec: "apng")
        try limits.check(info, what: "APNG")
    }

    /// Whether the IDAT image is part of the animation (an fcTL came before it).
    var defaultImageIsFirstFrame: Bool { structure.defaultImageIsFirstFrame }

    func forEachFrame(_ body: (AnimationFrame, UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        let w = info.width
        var canvas = [UInt8](repeating: 0, count: w * info.height * 4)
        var saved: [UInt8] = []
        var time = 0
        // Frames lie inside the canvas (checked in init); libavcodec's own max_pixels check counts padding,
        // so its guard is set well above the canvas rather than to it.
        let limits = Limits(maxPixels: max(info.width * info.height * 2, 1 << 20))
        for (index, f) in structure.frames.enumerated() {
            if isCancelled?() == true || Cancellation.isRequested { throw FlipbookError(.cancelled, "APNG decoding was cancelled") }
            let image: Image
            do {
                let png = try structure.png(for: f, source: source)
                image = try png.withUnsafeBytes { try LibAVStillCodec.decode($0, type: .png, limits: limits) }
                guard image.width == f.width, image.height == f.height else {
                    throw FlipbookError(.corrupt, "APNG frame \(index) decoded to \(image.width)x\(image.height), not \(f.width)x\(f.height)")
                }
            } catch let error as FlipbookError where error.code != .cancelled && error.code != .libraryUnavailable {
                if strict || index == 0 { throw error }
                warnings.append("decoding stopped after frame \(index - 1): \(error)")
                return
            }
            let dispose: APNGStructure.Dispose = index == 0 && f.dispose == .previous ? .background : f.dispose
            if dispose == .previous { saved = Self.copy(canvas, width: w, frame: f) }
            Self.draw(image, onto: &canvas, width: w, frame: f, blend: index == 0 ? .source : f.blend)
            let duration = info.durationsMs[index]
            let meta = AnimationFrame(index: index, presentationTimeMs: time, durationMs: duration)
            let more = try canvas.withUnsafeBufferPointer { try body(meta, $0) }
            if !more { return }
            time += duration
            switch dispose {
            case .none: break
            case .background: Self.clear(&canvas, width: w, frame: f)
            case .previous: Self.restore(saved, into: &canvas, width: w, frame: f)
            }
        }
    }

    /// The frame's rectangle of the canvas, RGBA rows packed.
    static func copy(_ canvas: [UInt8], width: Int, frame f: APNGStructure.Frame) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(f.width * f.height * 4)
        for y in f.y..<(f.y + f.height) {
            let start = (y * width + f.x) * 4
            out += canvas[start..<(start + f.width * 4)]
        }
        return out
    }

    static func restore(_ saved: [UInt8], into canvas: inout [UInt8], width: Int, frame f: APNGStructure.Frame) {
        let row = f.width * 4
        for r in 0..<f.height {
            let start = ((f.y + r) * width + f.x) * 4
            canvas.replaceSubrange(start..<(start + row), with: saved[(r * row)..<((r + 1) * row)])
        }
    }

    static func clear(_ canvas: inout [UInt8], width: Int, frame f: APNGStructure.Frame) {
        for y in f.y..<(f.y + f.height) {
            let start = (y * width + f.x) * 4
            for i in start..<(start + f.width * 4) { canvas[i] = 0 }
        }
    }

    /// SOURCE copies the frame's pixels; OVER composites straight-alpha RGBA by the APNG specification's
    /// formula (Porter-Duff over, in 8-bit straight alpha, rounded).
    static func draw(_ image: Image, onto canvas: inout [UInt8], width: Int, frame f: APNGStructure.Frame, blend: APNGStructure.Blend) {
        let rgba = image.withAlpha()
        rgba.pixels.withUnsafeBufferPointer { src in
            canvas.withUnsafeMutableBufferPointer { dst in
                for r in 0..<f.height {
                    var s = r * f.width * 4
                    var d = ((f.y + r) * width + f.x) * 4
                    for _ in 0..<f.width {
                        let sa = Int(src[s + 3])
                        if blend == .source || sa == 255 {
                            dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]; dst[d + 3] = src[s + 3]
                        } else if sa > 0 {
                            let da = Int(dst[d + 3])
                            let u = sa * 255, v = (255 - sa) * da
                            let total = u + v
                            for c in 0..<3 {
                                dst[d + c] = UInt8((Int(src[s + c]) * u + Int(dst[d + c]) * v + total / 2) / total)
                            }
                            dst[d + 3] = UInt8((total + 127) / 255)
                        }
                        s += 4
                        d += 4
                    }
                }
            }
        }
    }
}
