/// The library's version. Part of every derivative cache key, so a new release never serves bytes an older
/// encoder made. Bump it with any change to what an operation outputs.
public enum FlipbookVersion {
    /// Semantic version string, e.g. "0.11.0".
    public static let current = "0.11.0"
}
