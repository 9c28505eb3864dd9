import FlipbookStorage
import Synchronization

/// What the service last learned of each URL source: the origin's validator (ETag, Last-Modified), the size
/// and the identity its derivatives are keyed by. The next request for the URL asks the origin with a
/// conditional GET whether that still holds (a `304` of no body), instead of fetching the file again. At most
/// `capacity` URLs (about 300 bytes each); past it the table starts over, which costs each URL one fetch.
/// Thread-safe.
final class KnownValidators: Sendable {
    struct Known: Sendable {
        var validator: RemoteValidator
        var size: Int
        var identity: String
    }

    private let table = Mutex<[String: Known]>([:])
    let capacity: Int

    init(capacity: Int = 10_000) { self.capacity = max(1, capacity) }

    func value(for url: String) -> Known? { table.withLock { $0[url] } }

    func set(_ known: Known, for url: String) {
        table.withLock { table in
            if table.count >= capacity, table[url] == nil { table.removeAll(keepingCapacity: true) }
            table[url] = known
        }
    }
}
