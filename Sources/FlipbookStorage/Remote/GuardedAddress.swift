import FlipbookCore
#if canImport(Glibc)
import Glibc
#endif

/// The address a fetch connects to, chosen where the connection is made rather than from the URL's text: the
/// host is resolved once (`getaddrinfo`, as every client on this machine would: numeric spellings such as
/// `2130706433` or `0x7f.1` become the address they mean), every address it resolves to is checked, and the
/// connection then goes to the checked address, so a name that resolves differently a moment later (DNS
/// rebinding) cannot lead anywhere else. The Host header and the TLS server name stay the URL's.
package enum GuardedAddress {
    /// The checked address for `url` under `policy` (text form, bare IPv6), or a `fetch-refused` error naming
    /// the reason. Blocking (name resolution): call it on the fetching thread.
    package static func resolve(_ url: RemoteURL, policy: FetchPolicy) throws -> String {
        if let why = policy.hostRefusal(url) {
            policy.counters.refused("host")
            throw FlipbookError(.fetchRefused, why)
        }
        let addresses = try lookup(url)
        guard !addresses.isEmpty else { throw FlipbookError(.fetchFailed, "the host \(url.host) has no address") }
        if !policy.allowsPrivate(url) {
            // Any refused address refuses the name: one that resolves to a public and a private address is
            // either misconfigured or an attempt, and the client might be handed either.
            for address in addresses {
                if let why = AddressClass.refusal(address) {
                    policy.counters.refused("private-address")
                    throw FlipbookError(.fetchRefused, "\(url.host) is \(why); private addresses are fetched only for sources an operator allowed (--allow-private-sources HOST:PORT)",
                                        context: "fetch-refused: private-address")
                }
            }
        }
        return text(addresses[0])
    }

    /// The addresses `url`'s host resolves to (an IP literal is itself), as 4 or 16 bytes each.
    static func lookup(_ url: RemoteURL) throws -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        if url.isIPv6Literal { hints.ai_flags = AI_NUMERICHOST }
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(url.host, nil, &hints, &list)
        guard status == 0 else {
            let why = String(cString: gai_strerror(status))
            throw FlipbookError(status == EAI_NONAME ? .notFound : .fetchFailed,
                                "cannot resolve \(url.host)", underlying: why)
        }
        defer { freeaddrinfo(list) }
        var out: [[UInt8]] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        var raw = $0.pointee.sin_addr
                        out.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        var raw = $0.pointee.sin6_addr
                        out.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                default: break
                }
            }
            entry = current.pointee.ai_next
        }
        // getaddrinfo lists an address once per socket type asked for; one each is enough.
        var seen = Set<[UInt8]>()
        return out.filter { seen.insert($0).inserted }
    }

    /// The text form of 4 or 16 address bytes (IPv6 without brackets).
    static func text(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
