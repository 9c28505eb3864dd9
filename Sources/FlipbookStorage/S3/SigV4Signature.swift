/// What one SigV4 signing computed: the canonical request and string to sign exactly as hashed (for debug logs
/// and tests), the signature, and what to add to the request (headers, or the presigned query).
package struct SigV4Signature: Sendable {
    /// The canonical request, as its SHA-256 was taken.
    package var canonicalRequest: String
    /// The string to sign, as its HMAC was taken.
    package var stringToSign: String
    /// The signature, lowercase hex.
    package var signature: String
    /// The signed header names, lower case, ";"-joined.
    package var signedHeaders: String
    /// Header signing: the headers to add (`x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token`,
    /// `authorization`). Empty for presigning.
    package var headers: [(name: String, value: String)]
    /// The query to send (without "?"): the request's own, encoded, plus for presigning the `X-Amz-*`
    /// parameters.
    package var query: String
}
