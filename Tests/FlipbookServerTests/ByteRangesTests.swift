import Flipbook
import FlipbookServer
import FlipbookTestSupport
import Testing

/// The range parser line by line. Facts from RFC 9110 section 14 (examples in 14.1.2 and 14.4) and from
/// ASP.NET Core StaticFiles' RangeHeaderTests (a 62-byte file "0-9a-zA-Z", a 1-byte file, an empty file).
@Suite(.offPool) struct ByteRangesTests {
    // RFC 9110 14.1.2 examples on a 10000-byte representation.
    @Test(arguments: [
        ("bytes=0-499", 0...499),  // the first 500 bytes
        ("bytes=500-999", 500...999),  // the second 500 bytes
        ("bytes=-500", 9500...9999),  // the final 500 bytes
        ("bytes=9500-", 9500...9999),  // the final 500 bytes
        ("bytes=0-0", 0...0),  // the first byte
        ("bytes=-1", 9999...9999),  // the last byte
    ])
    func rfc9110Examples(header: String, expected: ClosedRange<Int>) {
        #expect(ByteRanges.evaluate(header, size: 10000) == .partial(expected))
    }

    @Test func rfc9110SeveralRangesAreNotOneRange() {
        // "bytes=0-999,4500-5499,-1000" (14.1.2): several ranges; we answer them with the whole body.
        #expect(ByteRanges.evaluate("bytes=0-999, 4500-5499, -1000", size: 10000) == .multiple([0...999, 4500...5499, 9000...9999]))
        // "bytes=500-600,601-999" and "bytes=500-700,601-999" (14.1.2).
        #expect(ByteRanges.evaluate("bytes=500-600,601-999", size: 10000) == .multiple([500...600, 601...999]))
    }

    @Test func rfc9110ContentRangeForms() {
        // 14.4: "bytes 42-1233/1234" and, for 416, "bytes */1234".
        #expect(ByteRanges.contentRange(42...1233, size: 1234) == "bytes 42-1233/1234")
        #expect(ByteRanges.unsatisfiedRange(size: 1234) == "bytes */1234")
        // Content-Range is written digit by digit (UTF8Builder): the extremes against Swift's own formatting.
        for (first, last, size) in [(0, 0, 1), (9, 10, 11), (99, 100, 1000), (Int.max - 1, Int.max - 1, Int.max)] {
            #expect(ByteRanges.contentRange(first...last, size: size) == "bytes \(first)-\(last)/\(size)")
        }
    }

    /// The builder behind cache keys, file identities and Content-Range, against interpolation.
    @Test func decimalTextMatchesSwiftsFormatting() {
        var numbers: [Int] = [0, 1, -1, 9, 10, -10, 99, 100, 1_000_000_007, Int.max, Int.min, Int.min + 1]
        var generator = SystemRandomNumberGenerator()
        numbers += (0..<200).map { _ in Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0...62, using: &generator) }
        for n in numbers {
            let text = String(utf8Capacity: 2 + UTF8Builder.integerCapacity) { b in
                b.append("<")
                b.append(decimal: n)
                b.append(ascii: UInt8(ascii: ">"))
            }
            #expect(text == "<\(n)>")
        }
        for n: UInt64 in [0, 7, UInt64(Int.max) + 1, UInt64.max] {
            #expect(String(utf8Capacity: UTF8Builder.integerCapacity) { $0.append(decimal: n) } == "\(n)")
        }
        #expect(String(utf8Capacity: 12) { $0.append("é/ü"); $0.append("") } == "é/ü")
    }

    // ASP.NET Core SingleValidRangeShouldServePartialContent, on 62 bytes.
    @Test(arguments: [
        ("0-0", 0...0), ("0- 9", 0...9), ("0 -9", 0...9), ("0 - 9", 0...9), ("10-35", 10...35), ("36-61", 36...61),
        ("36-", 36...61), ("-26", 36...61), ("0-", 0...61), ("-1001", 0...61),
    ])
    func aspNetSingleValid(range: String, expected: ClosedRange<Int>) {
        #expect(ByteRanges.evaluate("bytes=" + range, size: 62) == .partial(expected))
    }

    // ASP.NET Core SingleValidRangeShouldServePartialContentSingleByteFile.
    @Test(arguments: ["0-0", "0-", "-1", "-2", "0-1", "0-2"])
    func aspNetSingleByteFile(range: String) {
        #expect(ByteRanges.evaluate("bytes=" + range, size: 1) == .partial(0...0))
    }

    // ASP.NET Core SingleValidRangeShouldServeRequestedRangeNotSatisfiableEmptyFile.
    @Test(arguments: ["0-0", "0-", "-1", "-2", "0-1", "0-2"])
    func aspNetEmptyFile(range: String) {
        #expect(ByteRanges.evaluate("bytes=" + range, size: 0) == .unsatisfiable)
    }

    // ASP.NET Core SingleNotSatisfiableRange: 416 with bytes */62.
    @Test(arguments: ["100-", "1000-1001", "-0", "62-", "62-62"])
    func aspNetNotSatisfiable(range: String) {
        #expect(ByteRanges.evaluate("bytes=" + range, size: 62) == .unsatisfiable)
    }

    // ASP.NET Core SingleInvalidRangeIgnored: 200 with the whole body.
    @Test(arguments: ["", "0", "1-0", "-", "a-", "-b", "a-b", "0-1-2", "+1-2", "0x10-20"])
    func aspNetInvalidIgnored(range: String) {
        #expect(ByteRanges.evaluate("bytes=" + range, size: 62) == .full)
    }

    // ASP.NET Core MultipleValidRangesShouldServeFullContent.
    @Test(arguments: ["0-0,2-2", "0-0,60-", "0-0,-2", "2-2,0-0", "0-0,2-2,4-4,6-6,8-8", "0-0,6-6,8-8,2-2,4-4"])
    func aspNetMultiple(ranges: String) {
        guard case .multiple = ByteRanges.evaluate("bytes=" + ranges, size: 62) else {
            Issue.record("\(ranges) should be several ranges")
            return
        }
    }

    @Test func otherUnitsAndAbsentHeadersAreIgnored() {
        #expect(ByteRanges.evaluate(nil, size: 10) == .full)
        #expect(ByteRanges.evaluate("items=0-1", size: 10) == .full)
        #expect(ByteRanges.evaluate("bytes 0-1", size: 10) == .full)
        #expect(ByteRanges.evaluate("BYTES=0-1", size: 10) == .partial(0...1))  // the unit is case-insensitive
    }

    @Test func browserProbes() {
        // Safari's first probe: exactly two bytes. Chrome's: everything, as a 206.
        #expect(ByteRanges.evaluate("bytes=0-1", size: 1_000_000) == .partial(0...1))
        #expect(ByteRanges.evaluate("bytes=0-", size: 1_000_000) == .partial(0...999_999))
        // An end past the size is clamped; huge numbers saturate instead of overflowing.
        #expect(ByteRanges.evaluate("bytes=5-99999999999999999999999", size: 10) == .partial(5...9))
        #expect(ByteRanges.evaluate("bytes=99999999999999999999999-", size: 10) == .unsatisfiable)
        #expect(ByteRanges.evaluate("bytes=-99999999999999999999999", size: 10) == .partial(0...9))
    }

    @Test func oneSatisfiableAmongUnsatisfiable() {
        #expect(ByteRanges.evaluate("bytes=100-200, 0-1", size: 62) == .multiple([0...1]))
        #expect(ByteRanges.evaluate("bytes=100-200, 300-", size: 62) == .unsatisfiable)
    }
}

@Suite(.offPool) struct ConditionalsTests {
    let etag = "\"abc\""

    @Test func ifNoneMatch() {
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: "\"abc\"", ifRange: nil, hasRange: false) == .notModified)
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: "W/\"abc\"", ifRange: nil, hasRange: false) == .notModified)
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: "\"x\", \"abc\"", ifRange: nil, hasRange: false) == .notModified)
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: "*", ifRange: nil, hasRange: false) == .notModified)
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: "\"abcd\"", ifRange: nil, hasRange: false) == .proceed(rangeAllowed: false))
    }

    @Test func ifRangeIsStrong() {
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: nil, ifRange: "\"abc\"", hasRange: true) == .proceed(rangeAllowed: true))
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: nil, ifRange: "W/\"abc\"", hasRange: true) == .proceed(rangeAllowed: false))
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: nil, ifRange: "\"old\"", hasRange: true) == .proceed(rangeAllowed: false))
        // A date: no Last-Modified is sent, so a date never validates (ASP.NET: an old date gets 200).
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: nil, ifRange: "Tue, 15 Nov 1994 08:12:31 GMT", hasRange: true)
            == .proceed(rangeAllowed: false))
        #expect(Conditionals.evaluate(etag: etag, ifMatch: nil, ifNoneMatch: nil, ifRange: nil, hasRange: true) == .proceed(rangeAllowed: true))
    }

    @Test func ifMatch() {
        #expect(Conditionals.evaluate(etag: etag, ifMatch: "\"nope\"", ifNoneMatch: nil, ifRange: nil, hasRange: false) == .preconditionFailed)
        #expect(Conditionals.evaluate(etag: etag, ifMatch: "W/\"abc\"", ifNoneMatch: nil, ifRange: nil, hasRange: false) == .preconditionFailed)
        #expect(Conditionals.evaluate(etag: etag, ifMatch: "\"abc\"", ifNoneMatch: nil, ifRange: nil, hasRange: false) == .proceed(rangeAllowed: false))
    }
}

@Suite(.offPool) struct RequestTargetTests {
    @Test func decodesSegmentsAndQuery() throws {
        let t = try RequestTarget("/thumb/sub%20dir/gray%20%C3%BC.jpg?size=64&fit=cover")
        #expect(t.route == "thumb")
        #expect(t.segments == ["sub dir", "gray ü.jpg"])
        #expect(try t.parameter("size") == "64")
        #expect(try t.size(default: 256) == 64)
    }

    /// The pieces WHATWG's URL parser gives for the same targets (Chromium's and Python's urllib agree on
    /// these): the path cut at every '/', the query at every '&', each pair at its first '='.
    @Test func splitsAsURLParsersDo() throws {
        let t = try RequestTarget("/mp4/a/b%3Fc.gif?&size=2=3&&x&=y")
        #expect(t.route == "mp4")
        #expect(t.segments == ["a", "b?c.gif"])
        #expect(t.rawPath == "a/b%3Fc.gif")
        #expect(t.query.map(\.name) == ["size", "x", ""])
        #expect(t.query.map(\.value) == ["2=3", "", "y"])
        let root = try RequestTarget("/")
        #expect(root.route == "" && root.segments.isEmpty && root.rawPath == "" && root.query.isEmpty)
        let bare = try RequestTarget("/health?")
        #expect(bare.route == "health" && bare.rawPath == "" && bare.query.isEmpty)
        #expect(throws: RequestTarget.RouteError.self) { try RequestTarget("mp4/a.gif") }
        #expect(throws: RequestTarget.RouteError.self) { try RequestTarget("/mp4/a.gif/") }
    }

    @Test(arguments: ["/original/../etc/passwd", "/original/%2e%2e/x", "/original/a%2fb", "/original/a%2Fb", "/original//etc/passwd",
                      "/original/a/./b", "/original/a%00b", "/original/%", "/original/%zz", "/original/a%5cb", "/original/%ff"])
    func rejectsTraversal(target: String) {
        #expect(throws: RequestTarget.RouteError.self) { try RequestTarget(target) }
    }

    @Test(arguments: ["0", "4097", "-1", "abc", "12px", "", "+5", "1e3", "00000001"])
    func badSizes(text: String) throws {
        let t = try RequestTarget("/thumb/a.jpg?size=" + text)
        #expect(throws: RequestTarget.RouteError.self) { try t.size(default: 256) }
    }

    @Test func goodSizesAndDuplicates() throws {
        #expect(try RequestTarget("/thumb/a.jpg?size=4096").size(default: 256) == 4096)
        #expect(try RequestTarget("/thumb/a.jpg?size=1").size(default: 256) == 1)
        #expect(throws: RequestTarget.RouteError.self) { try RequestTarget("/thumb/a.jpg?size=1&size=2").size(default: 256) }
        #expect(throws: RequestTarget.RouteError.self) { try RequestTarget("/thumb/a.jpg?fit=fill").thumbnailRequest(defaultSize: 256) }
        #expect(throws: RequestTarget.RouteError.self) { try RequestTarget("/thumb/a.jpg?format=gif").thumbnailRequest(defaultSize: 256) }
    }
}
