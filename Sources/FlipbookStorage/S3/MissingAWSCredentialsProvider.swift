import FlipbookCore

/// What the configuration gives when no credentials are configured: every call throws the same
/// `invalid-argument` error naming what to set. Loading succeeds, so commands that never reach S3 still work.
package struct MissingAWSCredentialsProvider: AWSCredentialsProvider {
    /// The error thrown.
    package var error: FlipbookError
    package var source: String { "nowhere (no credentials configured)" }

    /// A provider that always throws `error`.
    package init(error: FlipbookError) { self.error = error }

    /// Throws ``error``.
    package func credentials() async throws -> AWSCredentials { throw error }
}
