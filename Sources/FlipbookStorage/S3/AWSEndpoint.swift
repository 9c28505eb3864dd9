import FlipbookCore

/// Where a service's requests go (S3, STS): the scheme, host, port and an optional base path of an endpoint URL
/// (`https://s3.eu-west-1.amazonaws.com`, `http://127.0.0.1:9000`, `https://ACCOUNT.r2.cloudflarestorage.com`).
/// Parsed once; nothing is resolved or connected.
package struct AWSEndpoint: Sendable, Equatable {
    /// `http` or `https`, lower case.
    package var scheme: String
    /// The host name (lower case), IPv4 address, or IPv6 address in brackets (`[::1]`).
    package var host: String
    /// The port when the URL names one.
    package var port: Int?
    /// A path prefix before every request path: "" or "/prefix" (no trailing "/"), as written (encoded).
    package var basePath: String

    /// AWS's own regional endpoint of `service` (`s3`, `sts`): `https://SERVICE.REGION.amazonaws.com`
    /// (`.amazonaws.com.cn` in the China regions).
    package static func aws(service: String, region: String) -> AWSEndpoint {
        AWSEndpoint(scheme: "https", host: "\(service).\(region).amazonaws.com" + (region.hasPrefix("cn-") ? ".cn" : ""), port: nil, basePath: "")
    }

    /// An endpoint from its parts.
    package init(scheme: String, host: String, port: Int?, basePath: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.basePath = basePath
    }

    /// Parses an endpoint URL: `http(s)://host[:port][/path]`. User info, a query or a fragment, another
    /// scheme, an empty host or a bad port are refused (`invalid-argument`, naming the URL).
    package init(url text: String) throws {
        func refuse(_ why: String) -> FlipbookError {
            FlipbookError(.invalidArgument, "endpoint URL \(text): \(why) (expected http(s)://HOST[:PORT])")
        }
        guard let schemeEnd = text.range(of: "://") else { throw refuse("no scheme") }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw refuse("the scheme is not http or https") }
        let rest = text[schemeEnd.upperBound...]
        guard !rest.contains("?"), !rest.contains("#") else { throw refuse("a query or fragment") }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@") else { throw refuse("user info in the URL") }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("an unclosed IPv6 address") }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._[]:".contains($0)) }) else {
            throw refuse("a bad host name")
        }
        var port: Int?
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value), portText.allSatisfy(\.isASCII) else { throw refuse("a bad port") }
            port = value
        }
        var base = String(rest[authorityEnd...])
        while base.hasSuffix("/") { base.removeLast() }
        self.init(scheme: scheme, host: host.lowercased(), port: port, basePath: base)
    }

    /// The Host header for this endpoint: the host, plus `:port` unless it is the scheme's default.
    package var hostHeader: String { hostHeader(host) }

    /// The Host header for `host` (a bucket's virtual host) at this endpoint's port.
    package func hostHeader(_ host: String) -> String {
        guard let port, port != (scheme == "https" ? 443 : 80) else { return host }
        return "\(host):\(port)"
    }

    /// The endpoint as a URL, without a trailing "/": `scheme://host[:port][basePath]`.
    package var url: String { "\(scheme)://\(hostHeader)\(basePath)" }

    /// Whether the host is an IP address literal or `localhost` (where buckets cannot be virtual hosts).
    package var isIPAddressOrLocalhost: Bool {
        if host.hasPrefix("[") || host == "localhost" || host.hasSuffix(".localhost") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isNumber) && Int($0)! <= 255 }
    }
}
