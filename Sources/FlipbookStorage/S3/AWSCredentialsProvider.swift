/// Where a signer gets credentials for each request. Implementations cache: `credentials()` is called before
/// every request, so it must be cheap once credentials are at hand (refreshing temporary ones shortly before
/// they expire).
package protocol AWSCredentialsProvider: Sendable {
    /// Credentials valid now. Throws a `FlipbookError` when there are none (naming what to configure) or they
    /// cannot be fetched.
    func credentials() async throws -> AWSCredentials
    /// Where the credentials come from, for messages and logs (`environment variables`, `profile dev in
    /// /home/me/.aws/credentials`, ...). Never contains a secret.
    var source: String { get }
}
