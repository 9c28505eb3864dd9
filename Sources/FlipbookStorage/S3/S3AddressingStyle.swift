/// The `addressing_style` of the shared AWS configuration (`s3 =` / `addressing_style = auto|path|virtual`):
/// what a user asks for, resolved per bucket to an ``S3Addressing``.
package enum S3AddressingStyle: String, Sendable, Equatable {
    /// Path-style for IP-address and localhost endpoints and for bucket names that are not DNS-compatible
    /// (including any with a dot, which would not match a TLS certificate's wildcard); virtual-hosted otherwise.
    case auto
    /// Always path-style.
    case path
    /// Always virtual-hosted.
    case virtual

    /// The addressing a request for `bucket` at `endpoint` uses.
    package func addressing(bucket: String, endpoint: AWSEndpoint) -> S3Addressing {
        switch self {
        case .path: .path
        case .virtual: .virtualHosted
        case .auto: !endpoint.isIPAddressOrLocalhost && Self.isDNSCompatible(bucket) ? .virtualHosted : .path
        }
    }

    /// Whether `bucket` can be a host name label: 3 to 63 of a-z 0-9 and '-', starting and ending with a
    /// letter or digit, no dots (the rule botocore applies before virtual-hosted addressing).
    package static func isDNSCompatible(_ bucket: String) -> Bool {
        let bytes = Array(bucket.utf8)
        func alnum(_ b: UInt8) -> Bool { (0x61...0x7A).contains(b) || (0x30...0x39).contains(b) }
        guard (3...63).contains(bytes.count), alnum(bytes.first!), alnum(bytes.last!) else { return false }
        return bytes.allSatisfy { alnum($0) || $0 == UInt8(ascii: "-") }
    }
}
