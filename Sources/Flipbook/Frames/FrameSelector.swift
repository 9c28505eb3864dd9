/// Which frames, or which moments, a job wants: every frame, every Nth, the frame shown at given times,
/// or N times evenly spread over the duration (storyboard tiles). Decided once, from the header's
/// duration; `FrameSource.forEachSelected` walks an animation by it in one sequential decode, and the
/// video storyboard takes its tile times from it. (A poster is one time, `PosterPosition`, chosen by
/// `PosterSelector` among the frames near it.)
public enum FrameSelector: Sendable, Equatable {
    /// Every frame, in order.
    case all
    /// Frames 0, N, 2N, ... by index. N >= 1.
    case every(Int)
    /// The frame on screen at each of these times (ms from the start, ascending); a time at or past the
    /// end takes the last frame, as a player shows it.
    case at([Int])
    /// `count` times, the first at 0, evenly spread over the duration (each at `k x duration / count` ms,
    /// rounded). count >= 1; repeats are allowed when the clip has fewer frames than times.
    case evenlySpaced(count: Int)

    /// The wanted times in ms for a clip of `durationMs`, ascending; nil for the index-based selectors.
    public func times(durationMs: Int) -> [Int]? {
        switch self {
        case .all, .every: return nil
        case .at(let times): return times.sorted()
        case .evenlySpaced(let count):
            let step = Double(durationMs) / Double(max(1, count))
            return (0..<max(1, count)).map { Int((Double($0) * step).rounded()) }
        }
    }

    /// For the index-based selectors, whether frame `index` is wanted (time-based ones: always).
    public func wants(index: Int) -> Bool {
        switch self {
        case .every(let n): index % max(1, n) == 0
        default: true
        }
    }
}

extension FrameSource {
    /// Calls `body` with each frame `selector` wants, in order, once per wanted time (so a frame held
    /// across several times comes several times), with the canvas valid only during the call; `body`
    /// returns false to stop. One sequential decode that stops after the last wanted frame. A time-based
    /// selector takes the duration from `info`, so the source must have read its headers (GIFs scanned,
    /// not streamed).
    public func forEachSelected(_ selector: FrameSelector, _ body: (AnimationFrame, UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        guard let times = selector.times(durationMs: info.durationMs) else {
            try forEachFrame { frame, canvas in selector.wants(index: frame.index) ? try body(frame, canvas) : true }
            return
        }
        var next = 0
        let lastIndex = info.frameCount - 1
        try forEachFrame { frame, canvas in
            let end = frame.presentationTimeMs + frame.durationMs
            while next < times.count, times[next] < end || frame.index >= lastIndex {
                next += 1
                if try !body(frame, canvas) { return false }
            }
            return next < times.count
        }
    }
}
