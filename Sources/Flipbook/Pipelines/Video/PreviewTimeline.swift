/// Where a preview's frames come from and where they land: `segments` windows spread across the video,
/// each started on the first frame decoded near its position, laid end to end on the clip's timeline.
/// A state machine fed one decoded frame time at a time, so the standalone preview and the one-pass
/// bundle choose frames by the same rules.
struct PreviewTimeline {
    struct Segment { var start: Double; var length: Double }

    let segments: [Segment]
    /// The clip's end in ms: segments x segment length.
    let endMs: Int
    private let minimumGap: Double
    private let minimumFrameMs: Int
    private(set) var current = 0
    private var first: Double?
    private var lastKept: Double?
    private(set) var lastMs: Int?

    init(durationSeconds duration: Double, options: PreviewOptions, minimumFrameMs: Int) {
        let count = min(options.segments, max(1, Int(duration / options.segmentLength)))
        let length = min(options.segmentLength, duration / Double(count))
        // Centre each window in its share of the video.
        segments = (0..<count).map { k in
            let centre = duration * (Double(k) + 0.5) / Double(count)
            return Segment(start: max(0, min(duration - length, centre - length / 2)), length: length)
        }
        endMs = Int((Double(count) * length * 1000).rounded())
        minimumGap = options.fps.map { 1 / $0 } ?? 0
        self.minimumFrameMs = minimumFrameMs
    }

    /// The segment still being filled, if any.
    var pending: Segment? { current < segments.count ? segments[current] : nil }

    /// Starts the current segment afresh (after a seek for it).
    mutating func restartSegment() {
        first = nil
        lastKept = nil
    }

    /// Offers the frame decoded at `t` seconds; returns its start in ms on the clip if it is kept. Frames
    /// far before the window (a distant keyframe) are passed over; a frame past the window ends it, and
    /// with `continuing` may start the next one (without, the caller seeks for the next window).
    mutating func offer(_ t: Double, continuing: Bool = true) -> Int? {
        while let segment = pending {
            if first == nil {
                if t + 1e-6 < segment.start - segment.length { return nil }
                first = t
            }
            let offset = t - first!
            if offset >= segment.length - 1e-6 {  // 0.7999999 belongs to the next segment's time
                current += 1
                restartSegment()
                if !continuing { return nil }
                if let next = pending, t + 1e-6 < next.start - next.length { return nil }
                continue
            }
            if let l = lastKept, t - l < minimumGap - 1e-6 { return nil }
            let outMs = Double(current) * segment.length * 1000
            let ms = Int((outMs + offset * 1000).rounded())
            // The first frame always; later ones only if both they and the frame before stay on screen long
            // enough (timestamps strictly increase; no frame is cut to nothing by the end).
            if let last = lastMs, ms - last < minimumFrameMs || endMs - ms < minimumFrameMs { return nil }
            lastKept = t
            lastMs = ms
            return ms
        }
        return nil
    }

    /// Ends the current segment (the stream ran out inside it).
    mutating func finishSegment() {
        current += 1
        restartSegment()
    }
}
