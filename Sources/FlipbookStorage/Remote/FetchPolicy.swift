import FlipbookCore
import Synchronization

/// What a fetch made on someone's behalf may do: the limits and the address rules every command that takes
/// a URL applies (ingest, poster and the other one-shot commands, the worker, the server). Every property
/// documents its default; the defaults refuse every private address.
package struct FetchPolicy: Sendable {
    /// Largest source accepted, checked against `Content-Length` and while reading; a gzip body counts
    /// decompressed. Default 512 MiB (the library's input limit).
    package var maxSourceBytes = 512 << 20
    /// The whole fetch, every request and redirect included. Default 30 s.
    package var totalTimeoutSeconds: Double = 30
    /// Connecting (TCP and TLS). Default 10 s, never more than the total.
    package var connectTimeoutSeconds: Double = 10
    /// Waiting for the first byte of an answer, and between bytes. Default 15 s, never more than the total.
    package var firstByteTimeoutSeconds: Double = 15
    /// Redirects followed. Default 3.
    package var maxRedirects = 3
    /// `host:port` pairs whose private addresses may be fetched (`--allow-private-sources`), as written in
    /// URLs (`127.0.0.1:8080`, `[::1]:80`, `media.internal:443`); `*` allows every private address. Default
    /// none.
    package var privateSources: Set<String> = []
    /// Hosts a URL may name (`--allow-source-host`): exact names or `*.example.org` (any subdomain); empty
    /// allows every host. Default empty.
    package var allowedHosts: [String] = []
    /// Hosts a URL may not name (`--deny-source-host`), same forms; checked before `allowedHosts`. Default empty.
    package var deniedHosts: [String] = []
    /// Sent with every request.
    package var userAgent = "Flipbook/\(FlipbookVersion.current)"
    /// Counts fetches, bytes and refusals, for `/metrics`. Default: a counter of its own.
    package var counters = FetchCounters()

    package init() {}

    /// Whether `url`'s host and port were opted in for private addresses.
    package func allowsPrivate(_ url: RemoteURL) -> Bool {
        privateSources.contains("*") || privateSources.contains(url.hostPort)
            || (url.defaultPort && privateSources.contains(url.hostForURL))
    }

    /// Why the host of `url` is refused by the host lists, or nil.
    package func hostRefusal(_ url: RemoteURL) -> String? {
        if deniedHosts.contains(where: { Self.matches(url.host, $0) }) { return "the host \(url.host) is on the deny list" }
        if !allowedHosts.isEmpty, !allowedHosts.contains(where: { Self.matches(url.host, $0) }) {
            return "the host \(url.host) is not on the allow list"
        }
        return nil
    }

    /// `host` against `pattern`: equal, or a subdomain of `*.domain`.
    static func matches(_ host: String, _ pattern: String) -> Bool {
        let pattern = pattern.lowercased()
        if pattern.hasPrefix("*.") { return host.hasSuffix(String(pattern.dropFirst(1))) }
        return host == pattern
    }
}

/// Fetches, bytes and refusals by reason, shared by every fetch made under one policy. Thread-safe.
package final class FetchCounters: Sendable {
    private struct Counts {
        var fetches = 0
        var bytes = 0
        var refusals: [String: Int] = [:]
    }

    private let counts = Mutex(Counts())

    package init() {}

    /// A request made, and its body bytes.
    package func fetched(bytes: Int) { counts.withLock { $0.fetches += 1; $0.bytes += bytes } }
    /// A fetch refused for `reason` (a short label: private-address, scheme, host, redirects, ...).
    package func refused(_ reason: String) { counts.withLock { $0.refusals[reason, default: 0] += 1 } }

    /// The totals so far.
    package var snapshot: (fetches: Int, bytes: Int, refusals: [String: Int]) {
        counts.withLock { ($0.fetches, $0.bytes, $0.refusals) }
    }
}
