import FlipbookCore
import NIOCore
import Synchronization

/// A remote object read by ranges, as a `ByteSource`: decoders and libavformat (through the AVIO bridge) read
/// it at offsets and never learn it is not a file.
///
/// The first request is a GET of the first `firstRead` bytes: a `206` gives the size (from `Content-Range`),
/// the validators every later read is pinned to, the type, and the first bytes, with no HEAD before it; a
/// `200` means the origin ignores ranges, and its body is then the whole object, kept in memory within the
/// fetcher's byte limit. Later misses fetch what was asked plus read-ahead that doubles while reads run on
/// sequentially (a JPEG's scan, a video's packets: 64 KiB, 128 KiB, ... up to `maxReadAhead`) and drops back
/// after a seek (libavformat's jump to an MP4's index), into a window of at most `windowBytes`, the least
/// recently used chunk going first. Reads are serialised by a lock: one object, one reader at a time.
package final class HTTPRangeSource: ByteSource {
    /// The object's size, from `Content-Range` (or the whole body).
    package let count: Int
    /// The object's `Content-Type`, if it gave one.
    package let contentType: String?
    /// What every read after the first is pinned to.
    package let validator: RemoteValidator
    /// Where the bytes come from.
    package let fetcher: any RangeFetching

    private struct Chunk {
        var offset: Int
        var bytes: ByteBuffer
        var end: Int { offset + bytes.readableBytes }
        var lastUse: Int
    }

    private struct State: ~Copyable {
        var chunks: [Chunk] = []
        var readAhead: Int
        var lastEnd = -1
        var tick = 0
        var requests = 0
        var fetched = 0
        var handedOut = 0
    }

    private let state: Mutex<State>
    private let firstRead: Int
    private let maxReadAhead: Int
    private let windowBytes: Int
    /// The whole object when the origin sent it in one answer.
    private let whole: ByteBuffer?

    /// Opens the object with its first ranged GET. Throws what the fetcher throws, and `.limitExceeded` for
    /// an origin that ignores ranges and sends more than the fetcher's limit.
    package convenience init(_ fetcher: any RangeFetching, firstRead: Int = 64 << 10, maxReadAhead: Int = 4 << 20,
                             windowBytes: Int = 16 << 20) throws {
        let answer = try fetcher.get(0..<max(1, firstRead), pin: nil)
        try self.init(fetcher, first: answer, firstRead: firstRead, maxReadAhead: maxReadAhead, windowBytes: windowBytes)
    }

    /// The same, from the answer to a first GET of `0..<firstRead` the caller already has (a revalidation
    /// that found the file changed carries the new first bytes): no request is made here.
    package init(_ fetcher: any RangeFetching, first answer: HTTPExchange.Answer, firstRead: Int = 64 << 10,
                 maxReadAhead: Int = 4 << 20, windowBytes: Int = 16 << 20) throws {
        self.fetcher = fetcher
        self.firstRead = max(1, firstRead)
        self.maxReadAhead = max(self.firstRead, maxReadAhead)
        self.windowBytes = max(self.maxReadAhead, windowBytes)
        validator = RemoteValidator(etag: answer.header("etag"), lastModified: answer.header("last-modified"))
        contentType = answer.header("content-type")
        var state = State(readAhead: self.firstRead)
        state.requests = 1
        state.fetched = answer.body.readableBytes
        switch answer.status {
        case 206:
            guard let range = answer.header("content-range"), let total = Self.total(fromContentRange: range),
                  let first = Self.start(fromContentRange: range), first == 0
            else {
                throw FlipbookError(.fetchFailed, "the server answered a range with a bad Content-Range")
            }
            count = total
            whole = nil
            state.chunks.append(Chunk(offset: 0, bytes: answer.body, lastUse: 0))
            state.lastEnd = answer.body.readableBytes
        case 416:
            // A range of an empty object is unsatisfiable: `Content-Range: bytes */0`.
            guard let range = answer.header("content-range"), Self.total(fromContentRange: range) == 0 else {
                throw FlipbookError(.fetchFailed, "the server refused the first range (416)")
            }
            count = 0
            whole = ByteBuffer()
        default:
            // 200: no range support; this body is the object.
            count = answer.body.readableBytes
            whole = answer.body
        }
        self.state = Mutex(state)
    }

    /// Requests made and body bytes received so far, this source's first GET included.
    package var traffic: (requests: Int, bytes: Int) { state.withLock { ($0.requests, $0.fetched) } }

    /// Bytes handed out so far by `read` and `withContiguousBytes`.
    package var bytesRead: Int { state.withLock { $0.handedOut } }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        guard offset >= 0 else { throw FlipbookError(.invalidArgument, "negative read offset \(offset)") }
        guard offset < count, buffer.count > 0, let base = buffer.baseAddress else { return 0 }
        let wanted = min(buffer.count, count - offset)
        if let whole {
            whole.withUnsafeReadableBytes { base.copyMemory(from: $0.baseAddress! + offset, byteCount: wanted) }
            state.withLock { $0.handedOut += wanted }
            return wanted
        }
        return try state.withLock { state in
            var done = 0
            while done < wanted {
                let position = offset + done
                state.tick += 1
                if let index = state.chunks.firstIndex(where: { $0.offset <= position && position < $0.end }) {
                    state.chunks[index].lastUse = state.tick
                    let chunk = state.chunks[index]
                    let n = min(wanted - done, chunk.end - position)
                    chunk.bytes.withUnsafeReadableBytes {
                        (base + done).copyMemory(from: $0.baseAddress! + (position - chunk.offset), byteCount: n)
                    }
                    done += n
                    continue
                }
                try fetch(at: position, atLeast: wanted - done, state: &state)
            }
            state.handedOut += done
            return done
        }
    }

    /// Fetches a chunk starting at `position`: at least `atLeast` bytes, plus the read-ahead, which doubles
    /// when this read continues where the last fetch ended and starts over after a jump.
    private func fetch(at position: Int, atLeast: Int, state: inout State) throws {
        if position == state.lastEnd {
            state.readAhead = min(maxReadAhead, state.readAhead * 2)
        } else {
            state.readAhead = firstRead
        }
        var length = max(atLeast, state.readAhead)
        // Never past the end, nor into a chunk already held.
        length = min(length, count - position)
        if let next = state.chunks.map(\.offset).filter({ $0 > position }).min() { length = min(length, max(atLeast, next - position)) }
        length = min(length, count - position)
        let answer = try fetcher.get(position..<(position + length), pin: validator)
        state.requests += 1
        state.fetched += answer.body.readableBytes
        guard answer.status == 206 else {
            // A 200 to a pinned range: the validator no longer matched (If-Range) or the origin stopped honouring ranges.
            throw FlipbookError(.sourceChanged, "the file changed while it was read (the server answered \(answer.status) to a range)")
        }
        guard let range = answer.header("content-range"), Self.start(fromContentRange: range) == position,
              Self.total(fromContentRange: range) == count, answer.body.readableBytes > 0
        else {
            throw FlipbookError(.sourceChanged, "the file changed while it was read (its size or range no longer matches)")
        }
        state.chunks.append(Chunk(offset: position, bytes: answer.body, lastUse: state.tick))
        state.lastEnd = position + answer.body.readableBytes
        // Keep the window: drop the least recently used chunks (never the one just fetched).
        var held = state.chunks.reduce(0) { $0 + $1.bytes.readableBytes }
        while held > windowBytes, state.chunks.count > 1 {
            let oldest = state.chunks.indices.dropLast().min { state.chunks[$0].lastUse < state.chunks[$1].lastUse }!
            held -= state.chunks[oldest].bytes.readableBytes
            state.chunks.remove(at: oldest)
        }
    }

    /// The whole object in one buffer: read through the chunks (the fetcher's limit bounds the size).
    package func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        if let whole {
            state.withLock { $0.handedOut += whole.readableBytes }
            return try whole.withUnsafeReadableBytes(body)
        }
        guard count <= fetcher.maxBytes else {
            throw FlipbookError(.limitExceeded, "the file is \(count) bytes, over the limit of \(fetcher.maxBytes) bytes")
        }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = try bytes.withUnsafeMutableBytes { try read(into: $0, at: 0) }
        guard n == count else { throw FlipbookError(.truncated, "the file ended after \(n) of \(count) bytes") }
        return try bytes.withUnsafeBytes(body)
    }

    /// The total of `bytes 0-99/1234` (or `bytes */1234`), nil if absent or `*`.
    static func total(fromContentRange text: String) -> Int? {
        guard let slash = text.lastIndex(of: "/") else { return nil }
        return Int(trimmed(text[text.index(after: slash)...]))
    }

    /// The first byte of `bytes 0-99/1234`.
    static func start(fromContentRange text: String) -> Int? {
        let text = trimmed(Substring(text))
        guard text.lowercased().hasPrefix("bytes "), let dash = text.firstIndex(of: "-") else { return nil }
        return Int(trimmed(text[text.index(text.startIndex, offsetBy: 6)..<dash]))
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let c = text.first, c == " " || c == "\t" { text.removeFirst() }
        while let c = text.last, c == " " || c == "\t" { text.removeLast() }
        return text
    }
}
