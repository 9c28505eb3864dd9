import Hummingbird
import NIOCore
import NIOHTTP1

/// An HTTP/1 response head (status line, fields, blank line) serialised in one pass into one buffer, for the
/// responses `CachedMediaHandler` writes past NIO's `HTTPResponseEncoder`: memory-cache hits, and the heads of
/// answers to HEAD requests. The bytes are the encoder's: `HTTP/1.1 206 Partial Content`, then each field as
/// `name: value` in the order given, each line ending in CRLF. The encoder makes four buffer writes per field,
/// each with its own capacity and exclusivity checks: with its framing checks and the conversion to its
/// header type, about 15k instructions of a 66k-instruction hit; this takes 2.3k (callgrind, under the
/// range scenario of `make bench-serve`).
///
/// Every value written here is made by the server or was checked when configured (`ResponseFields.legal`);
/// none comes from a request.
enum ResponseHead {
    /// The head of `status` with `fields`, as HTTP/1.1.
    static func encode(status: HTTPResponse.Status, fields: ResponseFields, allocator: ByteBufferAllocator) -> ByteBuffer {
        // NIO's status gives a code's standard reason phrase where swift-http-types' has none (a status made
        // from a bare code), as swift-nio-extras' conversion of the async path's responses does.
        let reason = HTTPResponseStatus(statusCode: Int(status.code), reasonPhrase: status.reasonPhrase).reasonPhrase
        var length = statusLineLength(reason)
        for field in fields.fields { length += field.name.text.utf8CodeUnitCount + Self.length(of: field.value) + 4 }
        return write(length: length, allocator: allocator) { head in
            head.statusLine(major: 1, minor: 1, code: Int(status.code), reason: reason)
            for field in fields.fields { head.field(field.name.text, field.value) }
        }
    }

    /// The bytes `value` takes in the head.
    private static func length(of value: ResponseFields.Value) -> Int {
        switch value {
        case .text(let text): text.utf8.count
        case .decimal(let n): digits(n)
        case .contentRange(let first, let last, let size): 8 + digits(first) + digits(last) + digits(size)
        }
    }

    /// Decimal digits of a non-negative `n`.
    static func digits(_ n: Int) -> Int {
        var digits = 1, bound: UInt = 10
        let value = UInt(n)
        while value >= bound && digits < 19 {
            digits += 1
            bound &*= 10
        }
        return value >= bound ? 20 : digits
    }

    /// The head NIO's encoder writes for `head` in answer to a HEAD request (or to CONNECT), with its framing
    /// rules (`correctlyFrameTransportHeaders`, with `automaticallySetFramingHeaders` on, as Hummingbird
    /// configures it): a HEAD answer advertises the framing GET's would have (Content-Length, else chunked),
    /// one to CONNECT or with a status that has no body carries neither field.
    static func encode(_ head: HTTPResponseHead, respondingToConnect: Bool, allocator: ByteBufferAllocator) -> ByteBuffer {
        var headers = head.headers
        if respondingToConnect || !head.status.mayHaveResponseBody {
            headers.remove(name: "content-length")
            headers.remove(name: "transfer-encoding")
        } else if headers.contains(name: "content-length") {
            headers.remove(name: "transfer-encoding")
        } else if head.version.major == 1 && head.version.minor >= 1 {
            headers.replaceOrAdd(name: "transfer-encoding", value: "chunked")
        }
        let reason = head.status.reasonPhrase
        var length = statusLineLength(reason)
        for (name, value) in headers { length += name.utf8.count + value.utf8.count + 4 }
        return write(length: length, allocator: allocator) { writer in
            writer.statusLine(major: head.version.major, minor: head.version.minor, code: Int(head.status.code), reason: reason)
            for (name, value) in headers { writer.field(name, value) }
        }
    }

    /// "HTTP/1.1 200 " and the reason, its CRLF and the head's closing CRLF, with room for any version and code.
    private static func statusLineLength(_ reason: String) -> Int { 5 + 3 * 20 + 3 + reason.utf8.count + 4 }

    private static func write(length: Int, allocator: ByteBufferAllocator, _ body: (inout Writer) -> Void) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: length)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { memory in
            var writer = Writer(memory: memory)
            body(&writer)
            writer.put(13)
            writer.put(10)
            return writer.count
        }
        return buffer
    }

    /// Copies text into raw memory, bounds checked: a twin of FlipbookCore's `UTF8Builder` for a `ByteBuffer`'s
    /// memory. Built on `UTF8Builder` instead (made inlinable, writing into raw memory, reading strings in
    /// place) a hit cost 50.2k instructions against 49.0k with this (callgrind, wrk ranges), so it stays.
    private struct Writer {
        let memory: UnsafeMutableRawBufferPointer
        var count = 0

        mutating func statusLine(major: Int, minor: Int, code: Int, reason: String) {
            if major == 1 && minor == 1 {
                put("HTTP/1.1 " as StaticString)
            } else {
                put("HTTP/" as StaticString)
                put(decimal: major)
                put(UInt8(ascii: "."))
                put(decimal: minor)
                put(UInt8(ascii: " "))
            }
            put(decimal: code)
            put(UInt8(ascii: " "))
            put(reason)
            put(13)
            put(10)
        }

        mutating func field(_ name: String, _ value: String) {
            put(name)
            put(UInt8(ascii: ":"))
            put(UInt8(ascii: " "))
            put(value)
            put(13)
            put(10)
        }

        mutating func field(_ name: StaticString, _ value: ResponseFields.Value) {
            put(name)
            put(UInt8(ascii: ":"))
            put(UInt8(ascii: " "))
            switch value {
            case .text(let text): put(text)
            case .decimal(let n): put(decimal: n)
            case .contentRange(let first, let last, let size):
                put("bytes " as StaticString)
                put(decimal: first)
                put(UInt8(ascii: "-"))
                put(decimal: last)
                put(UInt8(ascii: "/"))
                put(decimal: size)
            }
            put(13)
            put(10)
        }

        @inline(__always) mutating func put(_ byte: UInt8) {
            precondition(count < memory.count, "response head longer than measured")
            memory[count] = byte
            count += 1
        }

        @inline(__always) mutating func put(_ text: StaticString) {
            let count = text.utf8CodeUnitCount
            precondition(self.count + count <= memory.count, "response head longer than measured")
            UnsafeMutableRawBufferPointer(rebasing: memory[self.count..<(self.count + count)])
                .copyMemory(from: UnsafeRawBufferPointer(start: text.utf8Start, count: count))
            self.count += count
        }

        @inline(__always) mutating func put(_ text: String) {
            let copied = text.utf8.withContiguousStorageIfAvailable { utf8 -> Int in
                precondition(count + utf8.count <= memory.count, "response head longer than measured")
                UnsafeMutableRawBufferPointer(rebasing: memory[count..<(count + utf8.count)]).copyMemory(from: UnsafeRawBufferPointer(utf8))
                return utf8.count
            }
            if let copied {
                count += copied
            } else {
                for byte in text.utf8 { put(byte) }
            }
        }

        /// A non-negative `value` in decimal: its digits counted by comparison, written back to front with
        /// unsigned division (cheaper than signed).
        mutating func put(decimal value: Int) {
            precondition(value >= 0)
            let digits = ResponseHead.digits(value)
            precondition(count + digits <= memory.count, "response head longer than measured")
            var remaining = UInt(value), at = count + digits
            repeat {
                at -= 1
                let (quotient, digit) = remaining.quotientAndRemainder(dividingBy: 10)
                memory[at] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digit)
                remaining = quotient
            } while remaining > 0
            count += digits
        }
    }
}
