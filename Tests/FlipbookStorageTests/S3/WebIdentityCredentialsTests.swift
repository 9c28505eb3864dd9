import AsyncHTTPClient
import FlipbookCore
@testable import FlipbookStorage
import FlipbookTestSupport
import Foundation
import Glibc
import NIOCore
import Testing

/// Web identity credentials from a real STS (moto's server on loopback): the AssumeRoleWithWebIdentity call,
/// its XML answer, caching, refresh before expiry with one call for concurrent callers, the token file read
/// again on refresh, and typed errors.
@Suite(.offPool)
struct WebIdentityCredentialsTests {
    /// A clock the test moves.
    final class TestClock: @unchecked Sendable {
        private let lock = NSLock()
        private var current = Date()
        var now: Date { lock.withLock { current } }
        func set(_ date: Date) { lock.withLock { current = date } }
    }

    @Test func assumesTheRoleAndRefreshesBeforeExpiry() async throws {
        let moto = try MotoServer()
        defer { moto.stop() }
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let tokenFile = directory.url.appendingPathComponent("token").path
        try "eyJhbGciOiJSUzI1NiJ9.token-one.sig\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)

        // As the configuration finds it: the environment of an EKS pod, STS pointed at moto.
        let configuration = try AWSConfiguration.load(environment: [
            "HOME": directory.url.path, "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile, "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/flipbook",
            "AWS_ROLE_SESSION_NAME": "flipbook-test", "AWS_ENDPOINT_URL_STS": moto.endpoint, "AWS_REGION": "eu-west-1",
        ], httpClient: HTTPClient.shared)
        let loaded = try #require(configuration.credentials as? WebIdentityCredentialsProvider)
        // STS's expirations are the server's clock plus the duration, to the second: bracketed by the times
        // before and after the call, however long a loaded machine takes over it.
        let asked = Date()
        let first = try await loaded.credentials()
        let answered = Date()
        #expect(first.accessKeyID.hasPrefix("ASIA"))
        #expect(!first.secretAccessKey.isEmpty)
        #expect(first.sessionToken?.isEmpty == false)
        let expiration = try #require(first.expiration)
        #expect(expiration >= asked + 3600 - 2 && expiration <= answered + 3600 + 2, "STS's default hour")
        #expect(try await loaded.credentials() == first)
        #expect(await loaded.fetchCount == 1)

        // 15-minute credentials and a clock the test moves.
        var settings = loaded.settings
        settings.durationSeconds = 900
        let clock = TestClock()
        let provider = WebIdentityCredentialsProvider(settings: settings, httpClient: HTTPClient.shared, refreshMargin: 300, now: { clock.now })
        let askedA = Date()
        let a = try await provider.credentials()
        let answeredA = Date()
        let aExpires = try #require(a.expiration)
        #expect(aExpires >= askedA + 900 - 2 && aExpires <= answeredA + 900 + 2, "the 15 minutes asked for")
        clock.set(aExpires - 310)
        #expect(try await provider.credentials() == a, "more than the margin left: cached")
        #expect(await provider.fetchCount == 1)
        clock.set(aExpires - 290)
        let b = try await provider.credentials()
        #expect(b != a, "inside the margin: fetched anew")
        #expect(b.accessKeyID.hasPrefix("ASIA"))
        #expect(await provider.fetchCount == 2)

        // Many callers at once share one refresh.
        clock.set(try #require(b.expiration) - 60)
        let all = try await withThrowingTaskGroup(of: AWSCredentials.self) { group in
            for _ in 0..<8 { group.addTask { try await provider.credentials() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(all.map(\.accessKeyID)).count == 1)
        #expect(all[0] != b)
        #expect(await provider.fetchCount == 3)

        // The token file is read on every refresh: without it, still-valid credentials are kept, expired ones
        // give an error naming the file.
        let c = all[0]
        try FileManager.default.removeItem(atPath: tokenFile)
        clock.set(try #require(c.expiration) - 30)
        #expect(try await provider.credentials() == c)
        clock.set(try #require(c.expiration) + 1)
        await #expect { try await provider.credentials() } throws: { error in
            let error = error as? FlipbookError
            return error?.code == .io && error!.message.contains(tokenFile)
        }
        #expect(await provider.fetchCount == 3)

        // The token back: it works again.
        try "eyJhbGciOiJSUzI1NiJ9.token-two.sig".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        clock.set(clock.now + 11)
        let d = try await provider.credentials()
        #expect(d != c)
        #expect(await provider.fetchCount == 4)
    }

    @Test func anUnreachableSTSIsAnIOError() async throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let tokenFile = directory.url.appendingPathComponent("token").path
        try "t".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        // A loopback port held by a bound socket that does not listen: connections are refused, and no other
        // process can take the port while the test runs.
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                guard bind(socket, $0, length) == 0, getsockname(socket, $0, &length) == 0 else { throw FlipbookError(.io, "bind failed") }
            }
        }
        let port = UInt16(bigEndian: address.sin_port)
        let provider = WebIdentityCredentialsProvider(
            settings: .init(tokenFile: tokenFile, roleARN: "arn:aws:iam::1:role/r", sessionName: "s", endpoint: try AWSEndpoint(url: "http://127.0.0.1:\(port)"),
                            timeout: .seconds(2)),
            httpClient: HTTPClient.shared)
        await #expect { try await provider.credentials() } throws: { error in
            let error = error as? FlipbookError
            return error?.code == .io && error!.message.contains("AssumeRoleWithWebIdentity")
        }
    }
}
