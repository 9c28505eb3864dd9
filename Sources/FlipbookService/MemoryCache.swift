import Synchronization

/// An LRU cache of finished derivatives with a cost limit, as Nuke's `ImageCache`: by default an entry costs
/// its size in bytes, none may cost more than `entryLimit`, and the least recently used go first when the
/// total passes `costLimit`. Lookups and inserts are O(1) under one lock; values are returned, never copied
/// (`Derivative.bytes` is a shared buffer). The service keeps a second one, costed by entry, of disk-cache
/// objects held open (`Derivative.file`).
final class MemoryCache: Sendable {
    private final class Node {
        let key: String
        var value: Derivative
        var cost: Int
        var previous: Node?
        var next: Node?
        init(key: String, value: Derivative, cost: Int) {
            self.key = key
            self.value = value
            self.cost = cost
        }
    }

    private struct State: ~Copyable {
        var nodes: [String: Node] = [:]
        var head: Node?  // most recently used
        var tail: Node?  // least recently used
        var totalCost = 0

        mutating func unlink(_ node: Node) {
            node.previous?.next = node.next
            node.next?.previous = node.previous
            if head === node { head = node.next }
            if tail === node { tail = node.previous }
            node.previous = nil
            node.next = nil
        }

        mutating func pushFront(_ node: Node) {
            node.next = head
            head?.previous = node
            head = node
            if tail == nil { tail = node }
        }
    }

    /// Total byte cost kept at most.
    let costLimit: Int
    /// Largest single entry admitted.
    let entryLimit: Int
    /// Each entry costs one instead of its bytes.
    private let countsEntries: Bool
    private let state = Mutex(State())

    /// A cache of at most `costLimit` bytes, no entry over `entryFraction` of it.
    init(costLimit: Int, entryFraction: Double) {
        self.costLimit = max(0, costLimit)
        self.entryLimit = Int(Double(max(0, costLimit)) * entryFraction)
        countsEntries = false
    }

    /// A cache of at most `entries` entries, whatever their size.
    init(entries: Int) {
        costLimit = max(0, entries)
        entryLimit = 1
        countsEntries = true
    }

    /// The entry for `key`, marked most recently used.
    func value(for key: String) -> Derivative? {
        state.withLock { state in
            guard let node = state.nodes[key] else { return nil }
            state.unlink(node)
            state.pushFront(node)
            return node.value
        }
    }

    /// Stores `value`, evicting least recently used entries to stay within the limit. Entries over
    /// `entryLimit` are not stored.
    func insert(_ value: Derivative, for key: String) {
        let cost = countsEntries ? 1 : value.size + key.utf8.count + 128
        guard cost <= entryLimit else { return }
        state.withLock { state in
            if let old = state.nodes[key] {
                state.totalCost -= old.cost
                state.unlink(old)
            }
            let node = Node(key: key, value: value, cost: cost)
            state.nodes[key] = node
            state.pushFront(node)
            state.totalCost += cost
            while state.totalCost > costLimit, let last = state.tail {
                state.unlink(last)
                state.nodes[last.key] = nil
                state.totalCost -= last.cost
            }
        }
    }

    /// Current total cost in bytes and number of entries.
    var usage: (bytes: Int, count: Int) {
        state.withLock { ($0.totalCost, $0.nodes.count) }
    }
}
