/// How `FrameEncoder` times an animation's samples, so that every reader sees the animation's length and
/// every frame at its own time, and where H.264 B-frames may be used.
///
/// Why three: an MP4 with B-frames has composition offsets (`ctts`), and ffmpeg 5.1's MP4 reader gives a
/// packet its `stts` duration only in a stream without them (libavformat/mov.c, `mov_read_packet`: the
/// duration is set in the branch for samples without `ctts`). With them every packet reads as 0 and
/// libavformat's `compute_pkt_fields` fills in one duration for all from a frame rate: the H.264 timing
/// info's when it is under 1000 fps (a millisecond time base says 1000 fps, so nothing was filled in
/// and ffmpeg pipelines downstream lost the last frame's stay). ffmpeg's own `-tune animation` MP4 of a GIF
/// whose frames last unalike shows the same: every packet 10 ms (its guessed 100 fps), summing to a tenth
/// of the animation, and it ends at the last frame's start. So a packet's own duration survives ffmpeg 5.1
/// with B-frames only at a constant rate; otherwise one duration for all is what it reads, and the timing
/// info is chosen to make that the animation's average frame.
package enum SampleTiming: Sendable, Equatable {
    /// Millisecond timestamps, no B-frames: no `ctts`, so every packet carries its frame's own display
    /// time in `stts`, which ffmpeg 5.1 reads. Identical consecutive frames may merge into one sample.
    case variable
    /// Every frame lasts `frameMs`: the time base is one frame, x264 writes that rate into the H.264
    /// timing info and ffmpeg derives each packet's (exact) duration from it, so B-frames are kept.
    case constant(frameMs: Int)
    /// Frames at their own times with B-frames: `frames` frames over `totalMs`, then `samples - frames`
    /// samples repeating the last picture at the end of its stay, one average sample (`totalMs / samples`)
    /// apart, the last one average sample before the end. x264 is told the average rate (`force-cfr`), which
    /// it writes into the H.264 timing info, so ffmpeg 5.1 gives every packet `totalMs / samples`: none
    /// without a duration, they add up to the animation's length and the last ends at its end. The exact
    /// times are in the sample table (`stts` and `ctts`), which browsers and ffmpeg's decoders follow.
    case averaged(totalMs: Int, frames: Int, samples: Int)

    /// The most samples repeating the last picture, per frame of the animation, that `planned` adds.
    package static let maxRepeatsPerFrame = 1

    /// The timing for an animation whose frames last `durationsMs` (displayed milliseconds, every frame):
    /// - `constant` when all last alike;
    /// - `averaged` when the last frame is long enough to hold the repeats of its picture that make the
    ///   average sample no longer than the shortest frame, at least three of them and at most
    ///   `maxRepeatsPerFrame` per frame. No longer than the shortest frame: ffmpeg 5.1's constant-rate
    ///   transcode (`ffmpeg -i in.mp4 out.mp4`) shows each frame for the duration it read, the average, and
    ///   repeats it until the next frame's time, so a packet that read longer than its frame would push the
    ///   next one late. Three: at the end it repeats the last picture as often as the median of the last
    ///   three samples' repeats, which is none when two of them follow one average sample apart. Such
    ///   animations move at an even pace and hold their last picture (a logo, a banner, a chart drawing
    ///   itself, then a pause);
    /// - `variable` otherwise (fewer than two frames, a zero duration, or frames too uneven for that).
    package static func planned(for durationsMs: [Int]) -> SampleTiming {
        let n = durationsMs.count
        guard n >= 2, let first = durationsMs.first, let last = durationsMs.last, let shortest = durationsMs.min(), shortest > 0 else {
            return .variable
        }
        if durationsMs.allSatisfy({ $0 == first }) { return .constant(frameMs: first) }
        let total = durationsMs.reduce(0, +)
        let repeats = max(3, (total + shortest - 1) / shortest - n)
        // The repeats fit after the last frame's start: repeats * total / (n + repeats) < last.
        guard repeats <= maxRepeatsPerFrame * n, repeats * total < last * (n + repeats) else { return .variable }
        return .averaged(totalMs: total, frames: n, samples: n + repeats)
    }

    /// Whether B-frames may be used (any timing but `variable`).
    package var allowsBFrames: Bool { self != .variable }

    /// Whether every frame of the animation is encoded, identical ones included (as skipped frames): the
    /// sample count or the rate was fixed from the durations before the first frame.
    package var encodesEveryFrame: Bool { self != .variable }

    /// Time-base units per millisecond, as a fraction (`units / milliseconds`).
    var unitsPerMs: (units: Int, ms: Int) {
        switch self {
        case .variable: (1, 1)
        case .constant(let frameMs): (1, max(1, frameMs))
        case .averaged(let total, _, let samples): (samples / Self.gcd(samples, total), 1)
        }
    }

    /// The codec's and the stream's time base, in seconds per unit: a millisecond, one frame, or the finest
    /// unit in which both every millisecond and the average frame (`totalMs / samples`) are whole.
    var timeBase: (num: Int, den: Int) {
        let (units, ms) = unitsPerMs
        let common = Self.gcd(ms, 1000 * units)
        return (ms / common, 1000 * units / common)
    }

    /// `milliseconds` in time-base units, or nil if it falls between two.
    func units(_ milliseconds: Int) -> Int? {
        let (units, ms) = unitsPerMs
        return milliseconds * units % ms == 0 ? milliseconds * units / ms : nil
    }

    /// The rate x264 writes into the H.264 timing info (frames per second as a fraction), nil for `variable`.
    var frameRate: (num: Int, den: Int)? {
        switch self {
        case .variable: return nil
        case .constant(let frameMs): let g = Self.gcd(1000, frameMs); return (1000 / g, frameMs / g)
        case .averaged(let total, _, let samples): let g = Self.gcd(1000 * samples, total); return (1000 * samples / g, total / g)
        }
    }

    static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}
