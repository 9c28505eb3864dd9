import Flipbook

/// RFC 9110 section 14 byte ranges: a pure parser and evaluator, tested line by line against the RFC's
/// examples and ASP.NET Core StaticFiles' range tests. Written here because Hummingbird's file middleware
/// reads `bytes=-N` as `0-N` and answers a start past the end with a negative length.
public enum ByteRanges {
    /// What to do with a `Range` header for a representation of `size` bytes.
    public enum Decision: Equatable, Sendable {
        /// No usable Range (absent, another unit, or malformed: RFC 9110 lets a server ignore it): 200 with
        /// the whole body.
        case full
        /// One satisfiable range: 206 with these bytes (`first...last`, clamped to the size).
        case partial(ClosedRange<Int>)
        /// Several ranges of which at least one is satisfiable: answered 200 with the whole body
        /// (RFC 9110 14.2 allows ignoring Range; a multipart/byteranges body buys players nothing).
        case multiple([ClosedRange<Int>])
        /// Every range starts at or past the end (or is a zero-length suffix): 416 with
        /// `Content-Range: bytes */size`.
        case unsatisfiable
    }

    /// One syntactically valid range-spec.
    public enum Spec: Equatable, Sendable {
        /// `first-last` (`last` nil: `first-`, to the end).
        case from(Int, to: Int?)
        /// `-n`: the last n bytes.
        case suffix(Int)
    }

    /// Parses `bytes=...` into its range-specs, or nil when the header is not a valid bytes range set
    /// (another unit, an empty set, a non-digit, `last < first`). Numbers too large for an Int saturate
    /// to Int.max (they are past any end). Optional whitespace around commas and empty list elements are
    /// allowed (RFC 9110 5.6.1).
    public static func parse(_ header: String) -> [Spec]? {
        if let spec = simpleRange(header) { return [spec] }
        let bytes = Array(header.utf8)
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        let unit = String(decoding: bytes[..<equals], as: UTF8.self)
        guard unit.lowercased() == "bytes" else { return nil }
        var specs: [Spec] = []
        for element in bytes[(equals + 1)...].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let trimmed = element.drop(while: isOWS).reversed().drop(while: isOWS).reversed()
            let text = Array(trimmed)
            if text.isEmpty { continue }
            guard let dash = text.firstIndex(of: UInt8(ascii: "-")) else { return nil }
            // Whitespace around the dash is tolerated, as ASP.NET Core's StaticFiles does ("0 - 9").
            let left = text[..<dash].drop(while: isOWS).reversed().drop(while: isOWS).reversed()
            let right = text[(dash + 1)...].drop(while: isOWS).reversed().drop(while: isOWS).reversed()
            if left.isEmpty {
                guard let n = number(right) else { return nil }
                specs.append(.suffix(n))
            } else {
                guard let first = number(left) else { return nil }
                if right.isEmpty {
                    specs.append(.from(first, to: nil))
                } else {
                    guard let last = number(right), last >= first else { return nil }
                    specs.append(.from(first, to: last))
                }
            }
        }
        return specs.isEmpty ? nil : specs
    }

    /// The decision for `header` (nil: no Range header) on a representation of `size` bytes. Only GET
    /// evaluates ranges (RFC 9110 14.2: a HEAD ignores Range and gets the 200 headers).
    public static func evaluate(_ header: String?, size: Int) -> Decision {
        guard let header else { return .full }
        // The one-range forms players send, decided without the arrays below (same answers).
        if case .from(let first, let last)? = simpleRange(header) {
            return first < size ? .partial(first...min(last ?? Int.max, size - 1)) : .unsatisfiable
        }
        guard let specs = parse(header) else { return .full }
        var satisfiable: [ClosedRange<Int>] = []
        for spec in specs {
            switch spec {
            case .from(let first, let last):
                guard first < size else { continue }
                satisfiable.append(first...min(last ?? Int.max, size - 1))
            case .suffix(let n):
                guard n > 0, size > 0 else { continue }
                satisfiable.append(max(0, size - n)...(size - 1))
            }
        }
        if satisfiable.isEmpty { return .unsatisfiable }
        return specs.count == 1 ? .partial(satisfiable[0]) : .multiple(satisfiable)
    }

    /// `bytes first-last/size`, for a 206.
    public static func contentRange(_ range: ClosedRange<Int>, size: Int) -> String {
        String(utf8Capacity: 8 + 3 * UTF8Builder.integerCapacity) { text in
            text.append("bytes ")
            text.append(decimal: range.lowerBound)
            text.append(ascii: UInt8(ascii: "-"))
            text.append(decimal: range.upperBound)
            text.append(ascii: UInt8(ascii: "/"))
            text.append(decimal: size)
        }
    }

    /// `bytes */size`, for a 416.
    public static func unsatisfiedRange(size: Int) -> String { "bytes */\(size)" }

    /// `bytes=first-last` or `bytes=first-` exactly (the forms players send), read without the general
    /// parser's copies; nil for any other shape or `last < first`, which `parse` then reads in full. Over the
    /// header's contiguous UTF-8 (every header NIO hands over has it) with integer offsets: the byte loops of
    /// a `String.UTF8View` pay an index check per byte.
    private static func simpleRange(_ header: String) -> Spec? {
        header.utf8.withContiguousStorageIfAvailable(simpleRange(bytes:)) ?? Array(header.utf8).withUnsafeBufferPointer(simpleRange(bytes:))
    }

    private static func simpleRange(bytes: UnsafeBufferPointer<UInt8>) -> Spec? {
        let prefix: StaticString = "bytes="
        let count = bytes.count, start = prefix.utf8CodeUnitCount
        guard count > start else { return nil }
        for i in 0..<start where bytes[i] != prefix.utf8Start[i] { return nil }
        var dash = start
        while dash < count, bytes[dash] != UInt8(ascii: "-") { dash += 1 }
        guard dash < count, let first = number(bytes, start..<dash) else { return nil }
        if dash + 1 == count { return .from(first, to: nil) }
        guard let last = number(bytes, (dash + 1)..<count), last >= first else { return nil }
        return .from(first, to: last)
    }

    /// The decimal number at `range`, saturating at Int.max; nil if empty or not all digits.
    private static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty else { return nil }
        var value = 0
        for i in range {
            let d = bytes[i]
            guard d >= 0x30 && d <= 0x39 else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(Int(d - 0x30))
            value = o1 || o2 ? Int.max : plus
        }
        return value
    }

    private static func isOWS(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    private static func number(_ digits: some Collection<UInt8>) -> Int? {
        guard !digits.isEmpty else { return nil }
        var value = 0
        for d in digits {
            guard d >= 0x30 && d <= 0x39 else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(Int(d - 0x30))
            value = o1 || o2 ? Int.max : plus
        }
        return value
    }
}
