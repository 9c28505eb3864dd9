import FlipbookCore

/// An `http` or `https` URL taken apart strictly, for a fetch made on someone's behalf: scheme, host, port
/// and the request target as sent. Refused (`fetch-refused`): other schemes, user information
/// (`http://allowed@127.0.0.1/` names host 127.0.0.1, and credentials have no business in a media URL),
/// non-ASCII or empty hosts, bad ports, spaces and control characters. The fragment is dropped.
package struct RemoteURL: Sendable, Equatable, CustomStringConvertible {
    /// "http" or "https", lowercased.
    package var scheme: String
    /// The host as written, lowercased, without brackets for an IPv6 literal.
    package var host: String
    /// Whether `host` was a bracketed IPv6 literal.
    package var isIPv6Literal: Bool
    /// The port, explicit or the scheme's default.
    package var port: Int
    /// Path and query, as sent ("/" when empty).
    package var target: String

    /// The host as it goes in a URL or a Host header: bracketed for IPv6.
    package var hostForURL: String { isIPv6Literal ? "[\(host)]" : host }
    /// `host:port` as an operator writes it in `--allow-private-sources`.
    package var hostPort: String { "\(hostForURL):\(port)" }
    /// Whether the port is the scheme's default (then a URL or Host header leaves it out).
    package var defaultPort: Bool { port == (scheme == "https" ? 443 : 80) }

    package var description: String { "\(scheme)://\(hostForURL)\(defaultPort ? "" : ":\(port)")\(target)" }

    package init(_ text: String) throws {
        func refuse(_ why: String) -> FlipbookError { FlipbookError(.fetchRefused, why) }
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { throw refuse("not an http or https URL: \(text)") }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { throw refuse("the scheme \(scheme) is not fetched (only http and https)") }
        let rest = text[text.index(colon, offsetBy: 3)...]
        guard !rest.utf8.contains(where: Self.isForbidden) else {
            throw refuse("the URL has spaces, control characters or a backslash")
        }
        let authorityEnd = rest.firstIndex { (c: Character) in c == "/" || c == "?" || c == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@") else { throw refuse("URLs with user information are not fetched") }
        var target = String(rest[authorityEnd...])
        if let hash = target.firstIndex(of: "#") { target = String(target[..<hash]) }
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        var host: Substring
        var portText: Substring?
        var literal = false
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("an unclosed IPv6 literal") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            literal = true
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("junk after the IPv6 literal") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw refuse("no host") }
        guard host.utf8.allSatisfy({ $0 < 0x80 }) else { throw refuse("the host is not ASCII (write it in punycode)") }
        let port: Int
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit), let p = Int(portText), (1...65535).contains(p) else {
                throw refuse("a bad port")
            }
            port = p
        } else {
            port = scheme == "https" ? 443 : 80
        }
        self.scheme = scheme
        self.host = host.lowercased()
        self.isIPv6Literal = literal
        self.port = port
        self.target = target
    }

    /// Spaces, control characters and backslashes, which URL parsers disagree about.
    private static func isForbidden(_ byte: UInt8) -> Bool { byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "\\") }

    /// Where a redirect's `Location` leads from here: absolute, scheme-relative (`//host/x`), absolute-path
    /// or relative (resolved against this URL's path, without dot-segment tricks: those stay as sent).
    package func resolving(_ location: String) throws -> RemoteURL {
        if location.contains("://") { return try RemoteURL(location) }
        if location.hasPrefix("//") { return try RemoteURL(scheme + ":" + location) }
        let base = "\(scheme)://\(hostForURL)\(defaultPort ? "" : ":\(port)")"
        if location.hasPrefix("/") { return try RemoteURL(base + location) }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let folder = path.lastIndex(of: "/").map { path[...$0] } ?? "/"
        return try RemoteURL(base + folder + location)
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
