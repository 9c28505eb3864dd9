import AsyncHTTPClient
import FlipbookCore
import NIOCore
import NIOHTTP1
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Temporary credentials for a role, assumed with a web identity token (OIDC, as EKS pods get it through
/// `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN`): an STS `AssumeRoleWithWebIdentity` call, unsigned,
/// as an HTTPS form POST.
///
/// The credentials are cached and fetched again ``refreshMargin`` before they expire; the token file is read
/// anew for every fetch (the cluster rotates it). Concurrent callers share one fetch. When a refresh fails
/// while the cached credentials are still valid, those are returned and the next attempt waits 10 seconds, so
/// an STS outage costs neither requests nor a storm of calls. Each fetch is one HTTP request of ~1 KB with a
/// timeout (30 seconds by default).
package actor WebIdentityCredentialsProvider: AWSCredentialsProvider {
    /// What a fetch sends.
    package struct Settings: Sendable {
        /// The file holding the token (re-read on each fetch; surrounding whitespace dropped).
        package var tokenFile: String
        /// The role to assume.
        package var roleARN: String
        /// The session name recorded in CloudTrail.
        package var sessionName: String
        /// The STS endpoint (`https://sts.REGION.amazonaws.com` unless configured).
        package var endpoint: AWSEndpoint
        /// `DurationSeconds` to ask for; nil: STS's default (one hour).
        package var durationSeconds: Int?
        /// How long one call may take, connection attempts included (AsyncHTTPClient retries a refused
        /// connection until then).
        package var timeout: TimeAmount

        /// Settings from their parts.
        package init(tokenFile: String, roleARN: String, sessionName: String, endpoint: AWSEndpoint, durationSeconds: Int? = nil,
                     timeout: TimeAmount = .seconds(30)) {
            self.tokenFile = tokenFile
            self.roleARN = roleARN
            self.sessionName = sessionName
            self.endpoint = endpoint
            self.durationSeconds = durationSeconds
            self.timeout = timeout
        }
    }

    /// What is sent.
    package nonisolated let settings: Settings
    /// How long before expiry cached credentials are replaced (default 5 minutes).
    package nonisolated let refreshMargin: TimeInterval
    private nonisolated let httpClient: HTTPClient
    private nonisolated let now: @Sendable () -> Date

    private var cached: AWSCredentials?
    private var inFlight: Task<AWSCredentials, any Error>?
    private var retryAfter: Date?
    /// How many times credentials were fetched from STS successfully (for tests and metrics).
    package private(set) var fetchCount = 0

    package nonisolated var source: String { "web identity (role \(settings.roleARN), token file \(settings.tokenFile))" }

    /// A provider; `now` is the clock used to judge expiry (tests move it).
    package init(settings: Settings, httpClient: HTTPClient, refreshMargin: TimeInterval = 300,
                 now: @escaping @Sendable () -> Date = { Date() }) {
        self.settings = settings
        self.httpClient = httpClient
        self.refreshMargin = refreshMargin
        self.now = now
    }

    /// The cached credentials while they have more than ``refreshMargin`` left, else fresh ones from STS.
    package func credentials() async throws -> AWSCredentials {
        let time = now()
        if let cached, let expiration = cached.expiration, time < expiration - refreshMargin { return cached }
        if let cached, let retryAfter, time < retryAfter, let expiration = cached.expiration, time < expiration { return cached }
        let task: Task<AWSCredentials, any Error>
        if let inFlight {
            task = inFlight
        } else {
            let settings = settings, httpClient = httpClient
            task = Task { try await Self.assumeRole(settings, httpClient: httpClient) }
            inFlight = task
        }
        do {
            let fresh = try await task.value
            if inFlight == task {
                inFlight = nil
                cached = fresh
                retryAfter = nil
                fetchCount += 1
            }
            return fresh
        } catch {
            if inFlight == task {
                inFlight = nil
                retryAfter = now() + 10
            }
            if let cached, let expiration = cached.expiration, now() < expiration { return cached }
            throw error
        }
    }

    /// One `AssumeRoleWithWebIdentity` call: reads the token, posts the form, parses the XML answer.
    static func assumeRole(_ settings: Settings, httpClient: HTTPClient) async throws -> AWSCredentials {
        guard let tokenBytes = try readSmallFile(settings.tokenFile, limit: 64 << 10, what: "web identity token file") else {
            throw FlipbookError(.io, "the web identity token file \(settings.tokenFile) does not exist (AWS_WEB_IDENTITY_TOKEN_FILE or the profile's web_identity_token_file)")
        }
        let token = AWSConfigFile.trim(String(decoding: tokenBytes, as: UTF8.self))
        guard !token.isEmpty else { throw FlipbookError(.invalidArgument, "the web identity token file \(settings.tokenFile) is empty") }
        var form: [(name: String, value: String)] = [
            ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", settings.roleARN),
            ("RoleSessionName", settings.sessionName), ("WebIdentityToken", token),
        ]
        if let duration = settings.durationSeconds { form.append(("DurationSeconds", String(duration))) }
        let body = form.map { AWSPercentEncoding.encode($0.name) + "=" + AWSPercentEncoding.encode($0.value) }.joined(separator: "&")

        let url = settings.endpoint.url + "/"
        let what = "STS AssumeRoleWithWebIdentity for \(settings.roleARN) at \(url)"
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded; charset=utf-8")
        request.headers.add(name: "Accept", value: "text/xml")
        request.body = .bytes(ByteBuffer(string: body))
        let status: HTTPResponseStatus
        let answer: ByteBuffer
        do {
            let response = try await httpClient.execute(request, timeout: settings.timeout)
            status = response.status
            answer = try await response.body.collect(upTo: 1 << 20)
        } catch {
            throw FlipbookError(.io, "\(what) failed", underlying: "\(error)")
        }
        let bytes = Array(answer.readableBytesView)
        guard status == .ok else {
            let xml = try? XMLElements(parsing: bytes)
            let code = xml?.first("Code") ?? "HTTP \(status.code)"
            let message = xml?.first("Message") ?? ""
            let denied: Set<String> = ["AccessDenied", "InvalidIdentityToken", "ExpiredTokenException", "IDPRejectedClaim", "InvalidClientTokenId"]
            throw FlipbookError(denied.contains(code) ? FlipbookError.Code(rawValue: "access-denied") : .io,
                                "\(what) was refused: \(code)", underlying: message.isEmpty ? nil : message)
        }
        let xml = try XMLElements(parsing: bytes)
        guard let keyID = xml.first("AccessKeyId"), let secret = xml.first("SecretAccessKey"), let sessionToken = xml.first("SessionToken"),
              let expirationText = xml.first("Expiration"), let expiration = AWSTimestamp.parseISO8601(expirationText),
              !keyID.isEmpty, !secret.isEmpty else {
            throw FlipbookError(.corrupt, "\(what) answered without credentials and an expiration time")
        }
        return AWSCredentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: sessionToken, expiration: expiration)
    }
}
