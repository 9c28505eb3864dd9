/// Frame-timing rule for every animated format, in one place.
enum AnimationTiming {
    /// How long a frame is shown for a stored duration in ms: browsers play frames of 10 ms or less for
    /// 100 ms (Chromium's DeferredImageDecoder, Firefox, Safari), the same rule as `GIFTiming`'s <= 1 cs.
    static func displayedMilliseconds(_ ms: Int) -> Int { ms <= 10 ? 100 : ms }
}
