/// Credentials known up front: environment variables or a profile's keys. Returns the same value every time.
package struct StaticAWSCredentialsProvider: AWSCredentialsProvider {
    /// The credentials returned.
    package var value: AWSCredentials
    /// Where they came from.
    package var source: String

    /// A provider of `credentials`, described by `source`.
    package init(_ credentials: AWSCredentials, source: String) {
        value = credentials
        self.source = source
    }

    /// ``value``; no I/O.
    package func credentials() async throws -> AWSCredentials { value }
}
