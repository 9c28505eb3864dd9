import AsyncHTTPClient
import FlipbookCore
@testable import FlipbookStorage
import FlipbookTestSupport
import Foundation
import Testing

/// The shared AWS configuration as the CLI resolves it. Each scenario writes its own config and credentials
/// files under a temporary HOME given only through the `environment` parameter (the test process's
/// environment is never touched), and where botocore has the same rule, botocore
/// (Tests/storage/aws_config_reference.py, run with exactly that environment) is the reference.
@Suite(.offPool)
struct AWSConfigurationTests {
    /// A temporary HOME with `.aws/config` and `.aws/credentials` holding `config` and `credentials` (nil: absent).
    final class Home {
        let directory: TemporaryDirectory
        var path: String { directory.url.path }
        init(config: String? = nil, credentials: String? = nil) throws {
            directory = try TemporaryDirectory()
            try FileManager.default.createDirectory(at: directory.url.appendingPathComponent(".aws"), withIntermediateDirectories: true)
            if let config { try config.write(to: directory.url.appendingPathComponent(".aws/config"), atomically: true, encoding: .utf8) }
            if let credentials { try credentials.write(to: directory.url.appendingPathComponent(".aws/credentials"), atomically: true, encoding: .utf8) }
        }
    }

    struct Botocore: Decodable {
        var region: String?
        var endpoint_url: String
        var addressing_style: String?
        var max_attempts: Int?
        var access_key: String?
        var secret_key: String?
        var token: String?
    }

    static func botocore(_ environment: [String: String]) throws -> Botocore {
        let script = packageRoot.appendingPathComponent("Tests/storage/aws_config_reference.py").path
        let json = String(decoding: try JSONEncoder().encode(environment), as: UTF8.self)
        let run = try Run.program(Run.python, [script, json])
        guard run.status == 0 else { throw FlipbookError(.io, "aws_config_reference.py: \(run.stderr)") }
        return try JSONDecoder().decode(Botocore.self, from: Data(run.stdout.utf8))
    }

    static func load(_ environment: [String: String]) throws -> AWSConfiguration {
        try AWSConfiguration.load(environment: environment, httpClient: HTTPClient.shared)
    }

    /// Our resolution and botocore's agree on region, endpoint, addressing style, attempts and static keys.
    func expectBotocoreAgrees(_ environment: [String: String], _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let ours = try Self.load(environment)
        let theirs = try Self.botocore(environment)
        #expect(ours.region == theirs.region ?? "us-east-1", comment, sourceLocation: sourceLocation)
        if let endpoint = ours.endpoint {
            #expect(endpoint == theirs.endpoint_url, comment, sourceLocation: sourceLocation)
        } else {
            #expect(theirs.endpoint_url.hasSuffix(".amazonaws.com"), comment, sourceLocation: sourceLocation)
        }
        #expect(ours.addressingStyle.rawValue == theirs.addressing_style ?? "auto", comment, sourceLocation: sourceLocation)
        #expect(ours.maxAttempts == theirs.max_attempts ?? 3, comment, sourceLocation: sourceLocation)
        let credentials = try? await ours.credentials.credentials()
        #expect(credentials?.accessKeyID == theirs.access_key, comment, sourceLocation: sourceLocation)
        #expect(credentials?.secretAccessKey == theirs.secret_key, comment, sourceLocation: sourceLocation)
        #expect(credentials?.sessionToken == theirs.token, comment, sourceLocation: sourceLocation)
    }

    static let config = """
        # the shared config, as `aws configure` and people write it
        [default]
        region = eu-west-1
        ; a comment
        [profile dev]
        region=ap-southeast-2
        max_attempts = 5
        endpoint_url = http://localhost:4566
        s3 =
          addressing_style = virtual
        \tsignature_version = s3v4

        [profile  local ]
        services = loc
        Output : json
        aws_access_key_id = AKIACONFIGFILE
        aws_secret_access_key = config/secret
        [services loc]
        s3 =
          endpoint_url = http://127.0.0.1:9000
        sts =
          endpoint_url = http://127.0.0.1:9001
        [profile pathy]
        s3 =
            addressing_style = path
        """

    static let credentials = """
        [default]
        aws_access_key_id = AKIADEFAULT
        aws_secret_access_key = default/secret+key
        [dev]
        aws_access_key_id=AKIADEV   \r
        aws_secret_access_key =  dev secret with spaces\t
        aws_session_token = FwoGZXIvYXdzEtoken//=
        [local]
        aws_access_key_id = AKIACREDFILE
        aws_secret_access_key = cred/secret
        """

    @Test func environmentOnly() async throws {
        let home = try Home()
        defer { withExtendedLifetime(home) {} }
        let environment = ["HOME": home.path, "AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "env/secret", "AWS_SESSION_TOKEN": "tok"]
        let configuration = try Self.load(environment)
        #expect(configuration.region == "us-east-1")
        #expect(configuration.endpoint == nil)
        #expect(configuration.s3Endpoint.url == "https://s3.us-east-1.amazonaws.com")
        #expect(configuration.addressingStyle == .auto)
        #expect(configuration.maxAttempts == 3)
        #expect(try await configuration.credentials.credentials() == AWSCredentials(accessKeyID: "AKIAENV", secretAccessKey: "env/secret", sessionToken: "tok"))
        try await expectBotocoreAgrees(environment, "environment only")
        try await expectBotocoreAgrees(environment.merging(["AWS_DEFAULT_REGION": "eu-north-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
                                                            "AWS_MAX_ATTEMPTS": "9"]) { $1 }, "environment overrides")
    }

    @Test func profilesFromTheSharedFiles() async throws {
        let home = try Home(config: Self.config, credentials: Self.credentials)
        defer { withExtendedLifetime(home) {} }
        for profile in [nil, "dev", "local", "pathy"] {
            var environment = ["HOME": home.path]
            environment["AWS_PROFILE"] = profile
            try await expectBotocoreAgrees(environment, "profile \(profile ?? "default")")
        }
        let dev = try Self.load(["HOME": home.path, "AWS_PROFILE": "dev"])
        #expect(dev.region == "ap-southeast-2")
        #expect(dev.maxAttempts == 5)
        #expect(dev.endpoint == "http://localhost:4566")
        #expect(dev.addressingStyle == .virtual)
        #expect(try await dev.credentials.credentials() == AWSCredentials(accessKeyID: "AKIADEV", secretAccessKey: "dev secret with spaces", sessionToken: "FwoGZXIvYXdzEtoken//="))
        // The credentials file wins over the config file's keys; the config file's are used when it has none.
        let local = try Self.load(["HOME": home.path, "AWS_PROFILE": "local"])
        #expect(try await local.credentials.credentials().accessKeyID == "AKIACREDFILE")
        #expect(local.endpoint == "http://127.0.0.1:9000")
        let onlyConfig = try Home(config: Self.config)
        defer { withExtendedLifetime(onlyConfig) {} }
        #expect(try await Self.load(["HOME": onlyConfig.path, "AWS_PROFILE": "local"]).credentials.credentials().accessKeyID == "AKIACONFIGFILE")
        // Files elsewhere, named by the variables.
        let elsewhere = try Self.load(["HOME": "/nonexistent", "AWS_PROFILE": "dev",
                                       "AWS_CONFIG_FILE": home.path + "/.aws/config", "AWS_SHARED_CREDENTIALS_FILE": home.path + "/.aws/credentials"])
        #expect(elsewhere.region == "ap-southeast-2")
    }

    @Test func precedence() async throws {
        let home = try Home(config: Self.config, credentials: Self.credentials)
        defer { withExtendedLifetime(home) {} }
        let base = ["HOME": home.path, "AWS_PROFILE": "local"]
        // Environment credentials beat the profile's; a service's endpoint beats the global one.
        try await expectBotocoreAgrees(base.merging(["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "s"]) { $1 }, "env keys")
        try await expectBotocoreAgrees(base.merging(["AWS_ENDPOINT_URL": "http://10.0.0.1:1"]) { $1 }, "global env endpoint")
        try await expectBotocoreAgrees(base.merging(["AWS_ENDPOINT_URL": "http://10.0.0.1:1", "AWS_ENDPOINT_URL_S3": "https://s3.example.net"]) { $1 }, "S3 env endpoint")
        try await expectBotocoreAgrees(base.merging(["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true", "AWS_ENDPOINT_URL_S3": "https://s3.example.net"]) { $1 }, "ignored endpoints")
        try await expectBotocoreAgrees(["HOME": home.path, "AWS_PROFILE": "dev", "AWS_MAX_ATTEMPTS": "2", "AWS_DEFAULT_REGION": "sa-east-1"], "attempts and region")
        #expect(try Self.load(base.merging(["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "TRUE"]) { $1 }).endpoint == nil)
        #expect(try Self.load(base.merging(["AWS_ENDPOINT_URL_S3": "https://s3.example.net"]) { $1 }).s3Endpoint.host == "s3.example.net")
        // AWS_REGION (the SDKs' name; botocore reads only AWS_DEFAULT_REGION) comes first.
        #expect(try Self.load(["HOME": home.path, "AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "sa-east-1"]).region == "us-west-2")
        #expect(try Self.load(["HOME": home.path, "AWS_DEFAULT_REGION": "sa-east-1"]).region == "sa-east-1")
        #expect(try Self.load(["HOME": home.path, "AWS_REGION": ""]).region == "eu-west-1")
    }

    @Test func addressingStyles() throws {
        func endpoint(_ url: String) throws -> AWSEndpoint { try AWSEndpoint(url: url) }
        let aws = AWSEndpoint.aws(service: "s3", region: "eu-west-1")
        #expect(S3AddressingStyle.auto.addressing(bucket: "media", endpoint: aws) == .virtualHosted)
        #expect(S3AddressingStyle.auto.addressing(bucket: "my.media", endpoint: aws) == .path)
        #expect(S3AddressingStyle.auto.addressing(bucket: "Media", endpoint: aws) == .path)
        #expect(S3AddressingStyle.auto.addressing(bucket: "m_edia", endpoint: aws) == .path)
        #expect(S3AddressingStyle.auto.addressing(bucket: "-media", endpoint: aws) == .path)
        #expect(S3AddressingStyle.auto.addressing(bucket: "media", endpoint: try endpoint("http://127.0.0.1:9000")) == .path)
        #expect(S3AddressingStyle.auto.addressing(bucket: "media", endpoint: try endpoint("http://localhost:9000")) == .path)
        #expect(S3AddressingStyle.auto.addressing(bucket: "media", endpoint: try endpoint("http://[::1]:9000")) == .path)
        #expect(S3AddressingStyle.auto.addressing(bucket: "media", endpoint: try endpoint("https://minio.internal:9000")) == .virtualHosted)
        #expect(S3AddressingStyle.path.addressing(bucket: "media", endpoint: aws) == .path)
        #expect(S3AddressingStyle.virtual.addressing(bucket: "media", endpoint: try endpoint("http://127.0.0.1:9000")) == .virtualHosted)
        let local = try endpoint("http://127.0.0.1:9000/base/")
        #expect(local.basePath == "/base")
        let pathStyle = S3Addressing.path.target(bucket: "b", key: "k/x y", endpoint: local)
        #expect(pathStyle.host == "127.0.0.1:9000")
        #expect(pathStyle.path == "/base/b/k/x%20y")
        let virtual = S3Addressing.virtualHosted.target(bucket: "b", key: "", endpoint: aws)
        #expect(virtual.host == "b.s3.eu-west-1.amazonaws.com")
        #expect(virtual.path == "/")
        #expect(try endpoint("HTTPS://S3.Example.COM:443").hostHeader == "s3.example.com")
        for bad in ["s3.example.com", "ftp://x", "http://", "http://a:b@x", "http://x:0", "http://x:70000", "http://x/?q", "http://[::1"] {
            #expect(throws: FlipbookError.self, "\(bad)") { try endpoint(bad) }
        }
    }

    @Test func iniParsing() throws {
        let file = try AWSConfigFile(parsing: "[default]\r\n  # indented comment\r\nRegion = us-west-1 # kept, as the CLI keeps it\r\nkey: value = with = signs\r\n[profile x]\ns3 =\n  addressing_style = path\n  ; comment inside\n\n  max_concurrent_requests=20\nnote = first\n   continued\n", path: "t")
        #expect(file.sections["default"]?.values["region"] == "us-west-1 # kept, as the CLI keeps it")
        #expect(file.sections["default"]?.values["key"] == "value = with = signs")
        #expect(file.configProfile("x")?.nested["s3"] == ["addressing_style": "path", "max_concurrent_requests": "20"])
        #expect(file.configProfile("x")?.values["note"] == "first\ncontinued")
        #expect(file.configProfile("default")?.values["region"] != nil)
        #expect(file.configProfile("missing") == nil)
        for bad in ["region = x\n[default]", "[default]\njust words", "[default\nregion = x", "[p]\ns3 =\n  nonsense\n"] {
            #expect(throws: FlipbookError.self, "\(bad)") { try AWSConfigFile(parsing: bad, path: "t") }
        }
    }

    @Test func errorsNameWhatToFix() async throws {
        let home = try Home(config: "[profile half]\naws_access_key_id = A\n[profile style]\ns3 =\n  addressing_style = sideways\n[profile sso]\nsso_session = corp\n")
        defer { withExtendedLifetime(home) {} }
        func error(_ environment: [String: String]) -> FlipbookError? {
            do { _ = try Self.load(environment); return nil } catch { return error as? FlipbookError }
        }
        #expect(error(["HOME": home.path, "AWS_PROFILE": "nope"])?.message.contains("nope") == true)
        #expect(error(["HOME": home.path, "AWS_PROFILE": "half"])?.message.contains("aws_secret_access_key") == true)
        #expect(error(["HOME": home.path, "AWS_PROFILE": "style"])?.message.contains("sideways") == true)
        #expect(error(["HOME": home.path, "AWS_MAX_ATTEMPTS": "0"])?.code == .invalidArgument)
        #expect(error(["HOME": home.path, "AWS_ACCESS_KEY_ID": "A"])?.message.contains("AWS_SECRET_ACCESS_KEY") == true)
        #expect(error(["HOME": home.path, "AWS_ENDPOINT_URL": "localhost:9000"])?.code == .invalidArgument)
        // No credentials anywhere: loading works, asking for them says what to set.
        let none = try Self.load(["HOME": home.path])
        await #expect { try await none.credentials.credentials() } throws: { error in
            let error = error as? FlipbookError
            return error?.code == .invalidArgument && error!.message.contains("AWS_ACCESS_KEY_ID") && error!.message.contains("AWS_WEB_IDENTITY_TOKEN_FILE")
        }
        let sso = try Self.load(["HOME": home.path, "AWS_PROFILE": "sso"])
        await #expect { try await sso.credentials.credentials() } throws: { ($0 as? FlipbookError)?.code == .unsupported }
        #expect(try Self.botocore(["HOME": home.path]).access_key == nil)
    }

    @Test func webIdentityIsChosenFromEnvironmentOrProfile() throws {
        let home = try Home(config: "[profile eks]\nrole_arn = arn:aws:iam::123456789012:role/p\nweb_identity_token_file = ~/token\n", credentials: Self.credentials)
        defer { withExtendedLifetime(home) {} }
        let fromEnv = try Self.load(["HOME": home.path, "AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r",
                                     "AWS_REGION": "eu-west-2"])
        let provider = try #require(fromEnv.credentials as? WebIdentityCredentialsProvider)
        #expect(provider.settings.endpoint.url == "https://sts.eu-west-2.amazonaws.com")
        #expect(provider.settings.roleARN == "arn:aws:iam::1:role/r")
        let fromProfile = try Self.load(["HOME": home.path, "AWS_PROFILE": "eks", "AWS_ENDPOINT_URL_STS": "http://127.0.0.1:1"])
        let profileProvider = try #require(fromProfile.credentials as? WebIdentityCredentialsProvider)
        #expect(profileProvider.settings.tokenFile == home.path + "/token")
        #expect(profileProvider.settings.endpoint.url == "http://127.0.0.1:1")
        // Environment keys come before web identity.
        let keys = try Self.load(["HOME": home.path, "AWS_PROFILE": "eks", "AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "B"])
        #expect(keys.credentials is StaticAWSCredentialsProvider)
    }
}
