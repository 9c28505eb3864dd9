import AsyncHTTPClient
import Dispatch
import FlipbookCore
import NIOCore
import NIOHTTP1
import Synchronization

/// Ranged GETs of one remote URL under a `FetchPolicy`: the address is checked where the connection is
/// made (`GuardedAddress`), redirects are followed by hand (at most `maxRedirects`, each checked the same
/// way, never from https to http), every request must finish within the total timeout, and bodies are
/// bounded (a gzip body counts decompressed). Reads after the first are pinned to the first answer's
/// validator: `If-Match` with a strong ETag, else `If-Range` with its date (a changed file then answers 200,
/// which `HTTPRangeSource` refuses).
///
/// Each host reached gets an AsyncHTTPClient of its own whose only address for that host is the checked one
/// (`dnsOverride`); the client of the URL the redirects end at is kept for the ranges that follow, so they
/// reuse its connection. No trace headers are sent to remote origins.
package final class RemoteURLFetcher: RangeFetching {
    package let name: String
    package var maxBytes: Int { policy.maxSourceBytes }
    let policy: FetchPolicy
    let group: any EventLoopGroup

    private struct Connection {
        var url: RemoteURL
        var client: HTTPClient
    }

    private let current: Mutex<Connection?>
    private let first: RemoteURL

    /// Parses `url` (refusing other schemes and user information); nothing is resolved or sent yet.
    package init(url: String, policy: FetchPolicy, group: any EventLoopGroup = HTTPClient.defaultEventLoopGroup) throws {
        do {
            first = try RemoteURL(url)
        } catch {
            policy.counters.refused("url")
            throw error
        }
        name = first.description
        self.policy = policy
        self.group = group
        current = Mutex(nil)
    }

    deinit {
        current.withLock { $0?.client.shutdown { _ in } }
    }

    package func get(_ range: Range<Int>?, pin: RemoteValidator?) throws -> HTTPExchange.Answer {
        try fetch(range, pin: pin, unlessMatching: nil)
    }

    /// A conditional GET of `range` that asks the origin whether the file still matches `validator`
    /// (`If-None-Match` with its ETag, else `If-Modified-Since` with its date), through the same guard and
    /// redirects as `get`: a `304` (no body) says it does, anything else is the answer a plain `get` would
    /// have had (a `206` or `200` with the new bytes and validators). What a cache that keeps derivatives of a
    /// URL sends instead of fetching the body again. Blocking; the same typed errors as `get`.
    package func revalidate(_ validator: RemoteValidator, range: Range<Int>?) throws -> HTTPExchange.Answer {
        try fetch(range, pin: nil, unlessMatching: validator)
    }

    private func fetch(_ range: Range<Int>?, pin: RemoteValidator?, unlessMatching: RemoteValidator?) throws -> HTTPExchange.Answer {
        let deadline = NIODeadline.now() + .milliseconds(Int64(policy.totalTimeoutSeconds * 1000))
        var url = current.withLock { $0?.url } ?? first
        var redirects = 0
        while true {
            let answer: HTTPExchange.Answer
            do {
                answer = try send(url, range: range, pin: pin, unlessMatching: unlessMatching, deadline: deadline)
            } catch var error as FlipbookError where redirects > 0 {
                error.message = "redirected to \(url): " + error.message
                throw error
            }
            switch answer.status {
            case 200, 206, 416:
                return answer
            case 304 where unlessMatching != nil:
                return answer
            case 301, 302, 303, 307, 308:
                guard let location = answer.header("location") else {
                    throw FlipbookError(.fetchFailed, "a \(answer.status) redirect without a Location", context: "http \(answer.status)")
                }
                redirects += 1
                guard redirects <= policy.maxRedirects else {
                    policy.counters.refused("redirects")
                    throw FlipbookError(.fetchRefused, "more than \(policy.maxRedirects) redirects")
                }
                let next: RemoteURL
                do {
                    next = try url.resolving(location)
                } catch var error as FlipbookError {
                    policy.counters.refused("url")
                    error.message = "a redirect to \(location): " + error.message
                    throw error
                }
                if url.scheme == "https" && next.scheme == "http" {
                    policy.counters.refused("downgrade")
                    throw FlipbookError(.fetchRefused, "refusing a redirect from https to http (\(next))")
                }
                url = next
            case 412:
                throw FlipbookError(.sourceChanged, "the file changed while it was read (If-Match failed)")
            default:
                throw FlipbookError(.fetchFailed,
                                    (redirects > 0 ? "redirected to \(url): " : "") + "the server answered \(answer.status)",
                                    context: "http \(answer.status)")
            }
        }
    }

    /// One GET of `url` (no redirect followed).
    private func send(_ url: RemoteURL, range: Range<Int>?, pin: RemoteValidator?, unlessMatching: RemoteValidator?,
                      deadline: NIODeadline) throws -> HTTPExchange.Answer {
        let client = try client(for: url)
        var request = try HTTPClient.Request(url: url.description, method: .GET)
        request.headers.add(name: "User-Agent", value: policy.userAgent)
        // Ranges of the bytes as stored; a body sent compressed anyway is decoded within the byte limit.
        request.headers.add(name: "Accept-Encoding", value: "identity")
        if let range { request.headers.add(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound - 1)") }
        if let pin {
            if let etag = pin.strongETag {
                request.headers.add(name: "If-Match", value: etag)
            } else if let date = pin.lastModified {
                request.headers.add(name: "If-Range", value: date)
            }
        }
        if let validator = unlessMatching {
            // A weak ETag is fine here (RFC 9110 13.1.2 compares If-None-Match weakly).
            if let etag = validator.etag {
                request.headers.add(name: "If-None-Match", value: etag)
            } else if let date = validator.lastModified {
                request.headers.add(name: "If-Modified-Since", value: date)
            }
        }
        let limit = pin != nil ? (range?.count ?? policy.maxSourceBytes) : policy.maxSourceBytes
        let answer = try HTTPExchange.send(request, with: client, limit: limit, deadline: deadline, describe: "the server")
        policy.counters.fetched(bytes: answer.body.readableBytes)
        return answer
    }

    /// The client for `url`'s host, checked and pinned to its address; the one already held if it is for the
    /// same host and port.
    private func client(for url: RemoteURL) throws -> HTTPClient {
        if let held = current.withLock({ $0 }), held.url.scheme == url.scheme, held.url.host == url.host, held.url.port == url.port {
            current.withLock { $0?.url = url }
            return held.client
        }
        let address = try GuardedAddress.resolve(url, policy: policy)
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .milliseconds(Int64(min(policy.connectTimeoutSeconds, policy.totalTimeoutSeconds) * 1000)),
                                      read: .milliseconds(Int64(min(policy.firstByteTimeoutSeconds, policy.totalTimeoutSeconds) * 1000)))
        configuration.decompression = .enabled(limit: .size(policy.maxSourceBytes))
        configuration.dnsOverride = [url.host: address]
        // Connecting again after a failure would bypass nothing (the address is fixed), but a fetch has one deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.tracing.tracer = nil
        let client = HTTPClient(eventLoopGroup: group, configuration: configuration)
        let old = current.withLock { held -> HTTPClient? in
            let old = held?.client
            held = Connection(url: url, client: client)
            return old
        }
        old?.shutdown { _ in }
        return client
    }
}
