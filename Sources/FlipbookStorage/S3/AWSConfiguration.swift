import AsyncHTTPClient
import FlipbookCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The shared AWS configuration, resolved from the environment and the shared files the way the aws CLI and the
/// SDKs do, with no Flipbook-specific names: region, S3 endpoint, addressing style, retry attempts and a
/// credentials provider. Loading reads at most two small files; nothing is fetched until credentials are asked
/// for.
package struct AWSConfiguration: Sendable {
    /// The region: `AWS_REGION` > `AWS_DEFAULT_REGION` > the profile's `region` > `us-east-1`.
    package var region: String
    /// The S3 endpoint URL as configured: `AWS_ENDPOINT_URL_S3` > `AWS_ENDPOINT_URL` > the profile's
    /// `[services]` section's `s3 = endpoint_url` > the profile's `endpoint_url`; all of them ignored when
    /// `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` (or the profile's `ignore_configured_endpoint_urls`) is true.
    /// nil: AWS itself (``s3Endpoint`` is `https://s3.REGION.amazonaws.com`).
    package var endpoint: String?
    /// ``endpoint`` parsed, or AWS's regional S3 endpoint.
    package var s3Endpoint: AWSEndpoint
    /// The profile's `s3 =` / `addressing_style` (`auto` when unset).
    package var addressingStyle: S3AddressingStyle
    /// Attempts per request, the first included: `AWS_MAX_ATTEMPTS` > the profile's `max_attempts` > 3.
    package var maxAttempts: Int
    /// Where credentials come from, in the SDKs' order (see ``load(environment:httpClient:)``).
    package var credentials: any AWSCredentialsProvider
    /// The profile in use (`AWS_PROFILE`, else `default`).
    package var profile: String

    /// A configuration from its parts.
    package init(region: String, endpoint: String?, s3Endpoint: AWSEndpoint, addressingStyle: S3AddressingStyle, maxAttempts: Int,
                 credentials: any AWSCredentialsProvider, profile: String = "default") {
        self.region = region
        self.endpoint = endpoint
        self.s3Endpoint = s3Endpoint
        self.addressingStyle = addressingStyle
        self.maxAttempts = maxAttempts
        self.credentials = credentials
        self.profile = profile
    }

    /// The addressing of requests for `bucket`: ``addressingStyle`` resolved against ``s3Endpoint``.
    package func addressing(bucket: String) -> S3Addressing {
        addressingStyle.addressing(bucket: bucket, endpoint: s3Endpoint)
    }

    /// Resolves the configuration from `environment` (the process's, or a test's) and the shared files:
    /// `AWS_CONFIG_FILE` (default `$HOME/.aws/config`, profiles as `[profile NAME]` and `[default]`) and
    /// `AWS_SHARED_CREDENTIALS_FILE` (default `$HOME/.aws/credentials`, profiles as `[NAME]`), for the profile
    /// `AWS_PROFILE` (else `AWS_DEFAULT_PROFILE`, else `default`). Empty variables count as unset.
    ///
    /// Credentials, first found wins: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`,
    /// `AWS_CREDENTIAL_EXPIRATION`); web identity (`AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN` +
    /// `AWS_ROLE_SESSION_NAME`, each falling back to the profile's `web_identity_token_file`, `role_arn`,
    /// `role_session_name`) through STS at `AWS_ENDPOINT_URL_STS` > `AWS_ENDPOINT_URL` > the config's `sts`
    /// endpoint > `https://sts.REGION.amazonaws.com`, using `httpClient`; the profile's `aws_access_key_id`,
    /// `aws_secret_access_key`, `aws_session_token` in the credentials file, then in the config file. Not
    /// supported: EC2 instance metadata and container credentials, `credential_process`, SSO, and roles assumed
    /// from a `source_profile`. With none of them, loading succeeds and the provider throws `invalid-argument`
    /// naming what to set.
    ///
    /// Throws `invalid-argument` for a named profile found in neither file, a malformed file, half a key pair,
    /// a bad endpoint URL, addressing style or attempt count, and `io` for an unreadable file.
    package static func load(environment: [String: String], httpClient: HTTPClient) throws -> AWSConfiguration {
        func env(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        func expand(_ path: String) -> String {
            guard path == "~" || path.hasPrefix("~/"), let home = env("HOME") else { return path }
            return home + path.dropFirst()
        }
        let home = env("HOME")
        let configPath = env("AWS_CONFIG_FILE").map(expand) ?? home.map { $0 + "/.aws/config" }
        let credentialsPath = env("AWS_SHARED_CREDENTIALS_FILE").map(expand) ?? home.map { $0 + "/.aws/credentials" }
        let configFile = try configPath.flatMap { try AWSConfigFile.load(path: $0) }
        let credentialsFile = try credentialsPath.flatMap { try AWSConfigFile.load(path: $0) }

        let namedProfile = env("AWS_PROFILE") ?? env("AWS_DEFAULT_PROFILE")
        let profileName = namedProfile ?? "default"
        let profile = configFile?.configProfile(profileName) ?? AWSConfigFile.Section()
        let credentialsProfile = credentialsFile?.credentialsProfile(profileName)
        if namedProfile != nil, configFile?.configProfile(profileName) == nil, credentialsProfile == nil {
            throw FlipbookError(.invalidArgument, "the AWS profile \"\(profileName)\" (AWS_PROFILE) is in neither \(configPath ?? "~/.aws/config") nor \(credentialsPath ?? "~/.aws/credentials")")
        }
        func setting(_ key: String) -> String? {
            guard let value = profile.values[key], !value.isEmpty else { return nil }
            return value
        }
        let profileLabel = profileName == "default" ? "the default profile" : "profile \(profileName)"

        let region = env("AWS_REGION") ?? env("AWS_DEFAULT_REGION") ?? setting("region") ?? "us-east-1"

        // Endpoints: a service's own setting before the global one, the environment before the files.
        let ignoreText = env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS") ?? setting("ignore_configured_endpoint_urls") ?? "false"
        guard let ignoreEndpoints = Self.boolean(ignoreText) else {
            throw FlipbookError(.invalidArgument, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS (or ignore_configured_endpoint_urls) is \"\(ignoreText)\", not true or false")
        }
        let services = setting("services").flatMap { configFile?.servicesSection($0) }
        func endpointURL(service: String, envName: String) -> String? {
            if ignoreEndpoints { return nil }
            return env(envName) ?? env("AWS_ENDPOINT_URL")
                ?? services?.nested[service]?["endpoint_url"].flatMap { $0.isEmpty ? nil : $0 } ?? setting("endpoint_url")
        }
        let endpoint = endpointURL(service: "s3", envName: "AWS_ENDPOINT_URL_S3")
        let s3Endpoint = try endpoint.map { try AWSEndpoint(url: $0) } ?? .aws(service: "s3", region: region)

        let styleText = profile.nested["s3"]?["addressing_style"] ?? "auto"
        guard let addressingStyle = S3AddressingStyle(rawValue: styleText.lowercased()) else {
            throw FlipbookError(.invalidArgument, "\(profileLabel): s3 addressing_style is \"\(styleText)\", not auto, path or virtual")
        }

        let attemptsText = env("AWS_MAX_ATTEMPTS") ?? setting("max_attempts") ?? "3"
        guard let maxAttempts = Int(attemptsText), maxAttempts >= 1 else {
            throw FlipbookError(.invalidArgument, "AWS_MAX_ATTEMPTS (or max_attempts) is \"\(attemptsText)\", not a whole number of at least 1")
        }

        let credentials = try Self.credentialsProvider(
            env: env, profile: profile, credentialsProfile: credentialsProfile, profileLabel: profileLabel,
            configPath: configPath, credentialsPath: credentialsPath, expand: expand,
            stsEndpoint: try endpointURL(service: "sts", envName: "AWS_ENDPOINT_URL_STS").map { try AWSEndpoint(url: $0) }
                ?? .aws(service: "sts", region: region),
            httpClient: httpClient)
        return AWSConfiguration(region: region, endpoint: endpoint, s3Endpoint: s3Endpoint, addressingStyle: addressingStyle,
                                maxAttempts: maxAttempts, credentials: credentials, profile: profileName)
    }

    /// The credential chain (see ``load(environment:httpClient:)``).
    private static func credentialsProvider(
        env: (String) -> String?, profile: AWSConfigFile.Section, credentialsProfile: AWSConfigFile.Section?, profileLabel: String,
        configPath: String?, credentialsPath: String?, expand: (String) -> String, stsEndpoint: AWSEndpoint, httpClient: HTTPClient
    ) throws -> any AWSCredentialsProvider {
        // 1. The environment.
        let keyID = env("AWS_ACCESS_KEY_ID"), secret = env("AWS_SECRET_ACCESS_KEY")
        if keyID != nil || secret != nil {
            guard let keyID, let secret else {
                throw FlipbookError(.invalidArgument, "\(keyID == nil ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID") is set but \(keyID == nil ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY") is not")
            }
            var expiration: Date?
            if let text = env("AWS_CREDENTIAL_EXPIRATION") {
                guard let date = AWSTimestamp.parseISO8601(text) else {
                    throw FlipbookError(.invalidArgument, "AWS_CREDENTIAL_EXPIRATION is \"\(text)\", not an ISO 8601 time")
                }
                expiration = date
            }
            return StaticAWSCredentialsProvider(
                AWSCredentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: env("AWS_SESSION_TOKEN"), expiration: expiration),
                source: "environment variables (AWS_ACCESS_KEY_ID)")
        }
        func setting(_ key: String) -> String? {
            guard let value = profile.values[key], !value.isEmpty else { return nil }
            return value
        }
        // 2. Web identity, each setting from the environment or else the profile.
        if let tokenFile = env("AWS_WEB_IDENTITY_TOKEN_FILE") ?? setting("web_identity_token_file"),
           let roleARN = env("AWS_ROLE_ARN") ?? setting("role_arn") {
            let sessionName = env("AWS_ROLE_SESSION_NAME") ?? setting("role_session_name")
                ?? "flipbook-\(Int64(Date().timeIntervalSince1970 * 1000))"
            return WebIdentityCredentialsProvider(
                settings: .init(tokenFile: expand(tokenFile), roleARN: roleARN, sessionName: sessionName, endpoint: stsEndpoint),
                httpClient: httpClient)
        }
        // 3. The profile's keys, in the credentials file and then the config file.
        for (section, path) in [(credentialsProfile, credentialsPath), (profile, configPath)] {
            guard let section, let path else { continue }
            let keyID = section.values["aws_access_key_id"].flatMap { $0.isEmpty ? nil : $0 }
            let secret = section.values["aws_secret_access_key"].flatMap { $0.isEmpty ? nil : $0 }
            if keyID == nil && secret == nil { continue }
            guard let keyID, let secret else {
                throw FlipbookError(.invalidArgument, "\(profileLabel) in \(path) has \(keyID == nil ? "aws_secret_access_key" : "aws_access_key_id") but not \(keyID == nil ? "aws_access_key_id" : "aws_secret_access_key")")
            }
            let token = section.values["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 }
            return StaticAWSCredentialsProvider(AWSCredentials(accessKeyID: keyID, secretAccessKey: secret, sessionToken: token),
                                                source: "\(profileLabel) in \(path)")
        }
        // Nothing usable: say what the profile asks for that is not supported, or what to set.
        for key in ["source_profile", "credential_source", "credential_process", "sso_session", "sso_start_url"] where setting(key) != nil {
            return MissingAWSCredentialsProvider(error: FlipbookError(
                .unsupported, "\(profileLabel) gets its credentials through \(key), which Flipbook does not support; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (e.g. from `aws configure export-credentials`), or use web identity or static keys"))
        }
        return MissingAWSCredentialsProvider(error: FlipbookError(
            .invalidArgument,
            "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), or AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, or give \(profileLabel) aws_access_key_id and aws_secret_access_key in \(credentialsPath ?? "~/.aws/credentials") (AWS_PROFILE picks the profile); instance metadata is not consulted"))
    }

    /// "true"/"false" in any case, else nil.
    static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true": true
        case "false": false
        default: nil
        }
    }
}
