import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The `Date` header (RFC 9110 6.6.1, IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`), formatted at most once
/// a second and shared by every request in that second.
final class HTTPDate: Sendable {
    private let cached = Mutex<(second: Int, text: String)>((-1, ""))

    /// The current time as an IMF-fixdate.
    func now() -> String {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &t)
        let second = Int(t.tv_sec)
        return cached.withLock { cached in
            if cached.second != second { cached = (second, Self.format(second)) }
            return cached.text
        }
    }

    /// `seconds` since 1970 (UTC) as an IMF-fixdate.
    static func format(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
