/// How to pick the poster frame. Every property documents its default.
public struct PosterOptions: Sendable {
    /// Default 10% of the duration.
    public var position = PosterPosition.fraction(0.1)
    /// false (default): seek to the keyframe before the position and take the first good frame from
    /// there; true: decode up to the exact time.
    public var exact = false
    /// Skip near-uniform frames (black, white, a single colour) and look further along. Default true.
    public var skipUniformFrames = true
    /// false (default): the first good frame. true: the most representative of a window of good frames,
    /// the one whose colour histogram is closest to the window's mean (ffmpeg's `thumbnail` filter idea).
    public var representative = false
    /// Good frames compared in representative mode. Default 30 (about a second of video).
    public var windowFrames = 30
    /// Most frames decoded while looking for a good one. Default 300.
    public var maxFramesScanned = 300
    /// Most video time decoded past the starting point while looking, in seconds. Default 60.
    public var maxSecondsScanned = 60.0
    /// Wall-clock budget for the search, in seconds. Default 10. When it runs out the best frame so far
    /// is the poster; with `exact`, not reaching the time is a `limitExceeded` error.
    public var timeBudget = 10.0

    /// Every option at its documented default.
    public init() {}
}
