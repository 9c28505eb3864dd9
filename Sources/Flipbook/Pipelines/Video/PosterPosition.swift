/// Where in a video the poster comes from.
public enum PosterPosition: Sendable, Equatable {
    /// A fraction of the duration (0.1 = 10%, ffmpegthumbnailer's default).
    case fraction(Double)
    /// Seconds from the start.
    case seconds(Double)

    /// Parses "12.5s", "1500ms", "10%" or a bare number of seconds.
    public init?(_ text: String) {
        let t = text.filter { $0 != " " }.lowercased()
        if t.hasSuffix("%"), let v = Double(t.dropLast()), v >= 0 { self = .fraction(v / 100) }
        else if t.hasSuffix("ms"), let v = Double(t.dropLast(2)), v >= 0 { self = .seconds(v / 1000) }
        else if t.hasSuffix("s"), let v = Double(t.dropLast()), v >= 0 { self = .seconds(v) }
        else if let v = Double(t), v >= 0 { self = .seconds(v) }
        else { return nil }
    }

    /// Seconds from the start in a video of `duration` seconds.
    func seconds(duration: Double) -> Double {
        switch self {
        case .fraction(let f): duration * f
        case .seconds(let s): s
        }
    }
}
