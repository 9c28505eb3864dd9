import Synchronization

/// The service's memory cache of finished derivatives: one map, one lookup, two LRU lists with a budget
/// each, as Nuke's `ImageCache` keeps one.
///
/// - Bytes (`Derivative.bytes`): an entry costs its size plus `entryOverhead`, none may cost more than
///   `entryLimit`, and the least recently used go first when the total passes `costLimit`.
/// - Open disk-cache objects (`Derivative.file`, sent with `sendfile`): an entry costs one descriptor, and
///   the least recently used are dropped (closed once no response uses them) past `fileLimit`.
///
/// A key holds one entry of either kind; storing one replaces the other. Lookups and inserts are O(1) under
/// one lock; values are returned, never copied (`Derivative.bytes` is a shared buffer, `file` a shared
/// descriptor).
final class MemoryCache: Sendable {
    private final class Node {
        let key: DerivativeKey
        var value: Derivative
        let cost: Int
        let isFile: Bool
        var previous: Node?
        var next: Node?
        init(key: DerivativeKey, value: Derivative, cost: Int, isFile: Bool) {
            self.key = key
            self.value = value
            self.cost = cost
            self.isFile = isFile
        }
    }

    /// One kind's entries, most recently used first, and their total cost.
    private struct List {
        var head: Node?
        var tail: Node?
        var totalCost = 0
        var count = 0

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

    private struct State: ~Copyable {
        var nodes: [DerivativeKey: Node] = [:]
        var bytes = List()
        var files = List()

        mutating func remove(_ node: Node) {
            if node.isFile {
                files.unlink(node)
                files.totalCost -= node.cost
                files.count -= 1
            } else {
                bytes.unlink(node)
                bytes.totalCost -= node.cost
                bytes.count -= 1
            }
        }
    }

    /// Total byte cost of the bytes entries kept at most.
    let costLimit: Int
    /// Largest single bytes entry admitted.
    let entryLimit: Int
    /// Most open disk-cache objects kept.
    let fileLimit: Int
    private let state = Mutex(State())

    /// What an entry costs beyond its bytes: the node, its key and its slot in the map, about.
    static let entryOverhead = 192

    /// A cache of at most `costLimit` bytes, no entry over `entryFraction` of it, and at most `fileLimit`
    /// open disk-cache objects.
    init(costLimit: Int, entryFraction: Double, fileLimit: Int) {
        self.costLimit = max(0, costLimit)
        self.entryLimit = Int(Double(max(0, costLimit)) * entryFraction)
        self.fileLimit = max(0, fileLimit)
    }

    /// The entry for `key`, marked most recently used of its kind.
    func value(for key: DerivativeKey) -> Derivative? {
        state.withLock { state in
            guard let node = state.nodes[key] else { return nil }
            if node.isFile {
                if state.files.head !== node {
                    state.files.unlink(node)
                    state.files.pushFront(node)
                }
            } else if state.bytes.head !== node {
                state.bytes.unlink(node)
                state.bytes.pushFront(node)
            }
            return node.value
        }
    }

    /// Stores `value` (as an open object if its `file` is set, else as bytes), replacing the key's entry of
    /// either kind, and drops least recently used entries of that kind to stay within its budget. A bytes
    /// entry over `entryLimit`, or any object when `fileLimit` is 0, is not stored (an older entry stays).
    func insert(_ value: Derivative, for key: DerivativeKey) {
        let isFile = value.file != nil
        let cost = isFile ? 1 : value.size + Self.entryOverhead
        guard isFile ? fileLimit > 0 : cost <= entryLimit else { return }
        state.withLock { state in
            if let old = state.nodes[key] {
                state.remove(old)
            }
            let node = Node(key: key, value: value, cost: cost, isFile: isFile)
            state.nodes[key] = node
            if isFile {
                state.files.pushFront(node)
                state.files.totalCost += cost
                state.files.count += 1
                while state.files.totalCost > fileLimit, let last = state.files.tail {
                    state.remove(last)
                    state.nodes[last.key] = nil
                }
            } else {
                state.bytes.pushFront(node)
                state.bytes.totalCost += cost
                state.bytes.count += 1
                while state.bytes.totalCost > costLimit, let last = state.bytes.tail {
                    state.remove(last)
                    state.nodes[last.key] = nil
                }
            }
        }
    }

    /// The bytes entries' total cost and number (open objects are not counted).
    var usage: (bytes: Int, count: Int) {
        state.withLock { ($0.bytes.totalCost, $0.bytes.count) }
    }

    /// Disk-cache objects held open.
    var openFiles: Int { state.withLock { $0.files.count } }
}
