#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One set of AWS credentials: an access key, its secret, and for temporary credentials (STS, web identity)
/// a session token and when they stop working. A value type; nothing here is fetched.
package struct AWSCredentials: Sendable, Equatable {
    /// The access key ID (`AKIA…`, or `ASIA…` for temporary credentials).
    package var accessKeyID: String
    /// The secret key the signing key is derived from. Never sent.
    package var secretAccessKey: String
    /// The session token of temporary credentials, sent as `X-Amz-Security-Token`; nil for long-term keys.
    package var sessionToken: String?
    /// When temporary credentials expire; nil: they never do.
    package var expiration: Date?

    /// Credentials from their parts.
    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, expiration: Date? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }
}
