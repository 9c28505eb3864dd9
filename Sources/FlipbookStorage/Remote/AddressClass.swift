/// Why an IP address is not one a fetch made on someone's behalf may reach, or nil for a public unicast
/// address. Pure: judged on the address's bytes, after resolution, so every spelling of an address (`127.1`,
/// `2130706433`, `0x7f000001`, `[::ffff:7f00:1]`) meets the same rule.
///
/// Refused: unspecified, loopback, private (RFC 1918), shared address space (RFC 6598), link-local,
/// IETF protocol assignments, documentation and benchmarking ranges, the deprecated 6to4 relay, multicast,
/// reserved and broadcast IPv4; in IPv6 the unspecified and loopback addresses, unique-local, link-local,
/// site-local, multicast, discard-only, documentation, benchmarking, ORCHID, local-use NAT64, and anything
/// outside global unicast (2000::/3). IPv6 forms that carry an IPv4 address (IPv4-mapped, -compatible,
/// -translated, NAT64's well-known prefix, 6to4, Teredo's server and client, ISATAP) are judged by the IPv4
/// address they carry, so none is a way around the IPv4 rules.
package enum AddressClass {
    /// The reason `bytes` (4 for IPv4, 16 for IPv6) is refused, or nil if it may be fetched.
    package static func refusal(_ bytes: [UInt8]) -> String? {
        switch bytes.count {
        case 4: return ipv4Refusal(bytes)
        case 16: return ipv6Refusal(bytes)
        default: return "not an IP address"
        }
    }

    static func ipv4Refusal(_ a: [UInt8]) -> String? {
        let (b0, b1, b2) = (a[0], a[1], a[2])
        switch b0 {
        case 0: return "an unspecified address (0.0.0.0/8)"
        case 10: return "a private address (10.0.0.0/8)"
        case 127: return "a loopback address (127.0.0.0/8)"
        case 224...239: return "a multicast address (224.0.0.0/4)"
        case 240...255: return a == [255, 255, 255, 255] ? "the broadcast address" : "a reserved address (240.0.0.0/4)"
        default: break
        }
        if b0 == 100 && (64...127).contains(b1) { return "a shared address (100.64.0.0/10)" }
        if b0 == 169 && b1 == 254 { return "a link-local address (169.254.0.0/16)" }
        if b0 == 172 && (16...31).contains(b1) { return "a private address (172.16.0.0/12)" }
        if b0 == 192 && b1 == 168 { return "a private address (192.168.0.0/16)" }
        if b0 == 192 && b1 == 0 && b2 == 0 { return "an IETF protocol assignment (192.0.0.0/24)" }
        if b0 == 192 && b1 == 0 && b2 == 2 { return "a documentation address (192.0.2.0/24)" }
        if b0 == 192 && b1 == 88 && b2 == 99 { return "a 6to4 relay address (192.88.99.0/24)" }
        if b0 == 198 && (b1 == 18 || b1 == 19) { return "a benchmarking address (198.18.0.0/15)" }
        if b0 == 198 && b1 == 51 && b2 == 100 { return "a documentation address (198.51.100.0/24)" }
        if b0 == 203 && b1 == 0 && b2 == 113 { return "a documentation address (203.0.113.0/24)" }
        return nil
    }

    static func ipv6Refusal(_ a: [UInt8]) -> String? {
        func zero(_ range: Range<Int>) -> Bool { a[range].allSatisfy { $0 == 0 } }
        func embedded(_ indices: [Int], xor: UInt8 = 0) -> [UInt8] { indices.map { a[$0] ^ xor } }
        func via(_ form: String, _ v4: [UInt8]) -> String? {
            ipv4Refusal(v4).map { "\(form) of \($0)" }
        }
        if zero(0..<16) { return "the unspecified address (::)" }
        if zero(0..<15) && a[15] == 1 { return "the loopback address (::1)" }
        // IPv4-mapped ::ffff:0:0/96, then IPv4-translated ::ffff:0:0:0/96, then IPv4-compatible ::/96.
        if zero(0..<10) && a[10] == 0xFF && a[11] == 0xFF { return via("an IPv4-mapped address", embedded([12, 13, 14, 15])) }
        if zero(0..<8) && a[8] == 0xFF && a[9] == 0xFF && a[10] == 0 && a[11] == 0 {
            return via("an IPv4-translated address", embedded([12, 13, 14, 15]))
        }
        if zero(0..<12) { return via("an IPv4-compatible address", embedded([12, 13, 14, 15])) ?? "an IPv4-compatible address (::/96, deprecated)" }
        // NAT64: the well-known prefix carries an IPv4 address in its last 32 bits; the local-use /48 may be
        // split at any RFC 6052 length, so it is refused whole.
        if a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xFF && a[3] == 0x9B {
            if zero(4..<12) { return via("a NAT64 address", embedded([12, 13, 14, 15])) }
            if a[4] == 0 && a[5] == 1 { return "a local-use NAT64 address (64:ff9b:1::/48)" }
        }
        if a[0] == 0x01 && a[1] == 0x00 && zero(2..<8) { return "a discard-only address (100::/64)" }
        if a[0] == 0xFF { return "a multicast address (ff00::/8)" }
        if a[0] == 0xFE && (a[1] & 0xC0) == 0x80 { return "a link-local address (fe80::/10)" }
        if a[0] == 0xFE && (a[1] & 0xC0) == 0xC0 { return "a site-local address (fec0::/10)" }
        if (a[0] & 0xFE) == 0xFC { return "a unique-local address (fc00::/7)" }
        if (a[0] & 0xE0) != 0x20 { return "an address outside global unicast (2000::/3)" }
        // Inside 2000::/3.
        if a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0D && a[3] == 0xB8 { return "a documentation address (2001:db8::/32)" }
        if a[0] == 0x3F && a[1] == 0xFF && (a[2] & 0xF0) == 0 { return "a documentation address (3fff::/20)" }
        if a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x00 && a[3] == 0x02 && a[4] == 0 && a[5] == 0 {
            return "a benchmarking address (2001:2::/48)"
        }
        if a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x00 && (a[3] & 0xF0) == 0x10 { return "an ORCHID address (2001:10::/28)" }
        if a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0 {
            // Teredo: the server's IPv4 in bytes 4-7, the client's inverted in bytes 12-15.
            return via("a Teredo address (server)", embedded([4, 5, 6, 7]))
                ?? via("a Teredo address (client)", embedded([12, 13, 14, 15], xor: 0xFF))
        }
        if a[0] == 0x20 && a[1] == 0x02 { return via("a 6to4 address", embedded([2, 3, 4, 5])) }
        // ISATAP interface identifiers carry an IPv4 address under any /64.
        if (a[8] == 0x00 || a[8] == 0x02) && a[9] == 0x00 && a[10] == 0x5E && a[11] == 0xFE {
            return via("an ISATAP address", embedded([12, 13, 14, 15]))
        }
        return nil
    }
}
