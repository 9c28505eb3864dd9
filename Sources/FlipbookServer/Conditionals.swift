/// RFC 9110 section 13 preconditions on a strong ETag: If-Match, If-None-Match and If-Range. The server
/// sends no Last-Modified, so date forms of If-Range never match (the whole body is sent, as the RFC asks)
/// and If-Modified-Since / If-Unmodified-Since are not evaluated.
public enum Conditionals {
    /// The outcome of the preconditions for a GET or HEAD, in RFC 9110 13.2.2's order.
    public enum Outcome: Equatable, Sendable {
        /// Go on (and honour Range only if `rangeAllowed`).
        case proceed(rangeAllowed: Bool)
        /// 304 Not Modified (If-None-Match matched).
        case notModified
        /// 412 Precondition Failed (If-Match did not match).
        case preconditionFailed
    }

    /// Evaluates the request's conditional headers against the current `etag` (quoted, strong).
    public static func evaluate(etag: String, ifMatch: String?, ifNoneMatch: String?, ifRange: String?, hasRange: Bool) -> Outcome {
        if let ifMatch {
            // Strong comparison (13.1.1).
            guard matches(ifMatch, etag: etag, weak: false) else { return .preconditionFailed }
        }
        if let ifNoneMatch, matches(ifNoneMatch, etag: etag, weak: true) { return .notModified }
        guard hasRange else { return .proceed(rangeAllowed: false) }
        if let ifRange {
            // 13.1.5: a strong comparison with an entity-tag; a weak tag or a date never matches here.
            let value = ifRange.trimmingOWS
            return .proceed(rangeAllowed: !value.hasPrefix("W/") && value == etag)
        }
        return .proceed(rangeAllowed: true)
    }

    /// Whether a list header (`*` or comma-separated entity-tags) matches `etag`. Weak comparison ignores
    /// `W/` prefixes; strong comparison requires both tags strong.
    public static func matches(_ list: String, etag: String, weak: Bool) -> Bool {
        if list.trimmingOWS == "*" { return true }
        for tag in entityTags(list) {
            if tag.weak && !weak { continue }
            if tag.opaque == etag { return true }
        }
        return false
    }

    /// Splits a list of entity-tags (`"a", W/"b"`), honouring quotes; malformed members are skipped.
    public static func entityTags(_ list: String) -> [(weak: Bool, opaque: String)] {
        var out: [(weak: Bool, opaque: String)] = []
        let chars = Array(list.utf8)
        var i = 0
        while i < chars.count {
            while i < chars.count, chars[i] == 0x20 || chars[i] == 0x09 || chars[i] == UInt8(ascii: ",") { i += 1 }
            guard i < chars.count else { break }
            var weak = false
            if chars[i] == UInt8(ascii: "W"), i + 1 < chars.count, chars[i + 1] == UInt8(ascii: "/") {
                weak = true
                i += 2
            }
            guard i < chars.count, chars[i] == UInt8(ascii: "\"") else {
                // Not an entity-tag: skip to the next comma.
                while i < chars.count, chars[i] != UInt8(ascii: ",") { i += 1 }
                continue
            }
            let start = i
            i += 1
            while i < chars.count, chars[i] != UInt8(ascii: "\"") { i += 1 }
            guard i < chars.count else { break }
            i += 1
            out.append((weak, String(decoding: chars[start..<i], as: UTF8.self)))
        }
        return out
    }
}

extension String {
    var trimmingOWS: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
