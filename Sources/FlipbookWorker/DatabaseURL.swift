import Foundation
import NIOSSL
import PostgresNIO

/// `--database URL` -> PostgresNIO configurations: the pool's (`configuration`) and a single connection's
/// (`connectionConfiguration`, for `Session`), from the same parse.
///
/// `postgres://user:password@host:port/database`, or a unix socket as libpq spells it:
/// `postgres://user@/database?host=/run/postgresql` (the socket file is `<host>/.s.PGSQL.<port>`).
/// `?sslmode=disable|prefer|require` chooses TLS over TCP (default prefer). `?application_name=` names the
/// connections in `pg_stat_activity` as libpq's does; a worker's are `flipbook-worker` unless it says otherwise.
public enum DatabaseURL {
    public static func configuration(_ text: String) throws -> PostgresClient.Configuration {
        let url = try Parsed(text)
        var configuration: PostgresClient.Configuration
        if let socket = url.socket {
            configuration = .init(unixSocketPath: socket, username: url.user, password: url.password, database: url.database)
        } else {
            let tls: PostgresClient.Configuration.TLS
            switch url.sslmode {
            case "disable": tls = .disable
            case "require", "verify-full": tls = .require(.makeClientConfiguration())
            default: tls = .prefer(.makeClientConfiguration())
            }
            configuration = .init(host: url.host, port: url.port, username: url.user, password: url.password,
                                  database: url.database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = [("application_name", url.applicationName)]
        return configuration
    }

    public static func connectionConfiguration(_ text: String) throws -> PostgresConnection.Configuration {
        let url = try Parsed(text)
        var configuration: PostgresConnection.Configuration
        if let socket = url.socket {
            configuration = .init(unixSocketPath: socket, username: url.user, password: url.password, database: url.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            switch url.sslmode {
            case "disable": tls = .disable
            case "require", "verify-full": tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            default: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            configuration = .init(host: url.host, port: url.port, username: url.user, password: url.password,
                                  database: url.database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = [("application_name", url.applicationName)]
        return configuration
    }

    private struct Parsed {
        var user: String
        var password: String?
        var database: String?
        var host: String
        var port: Int
        /// The unix socket file, if `?host=` names a directory.
        var socket: String?
        var sslmode: String
        var applicationName: String

        init(_ text: String) throws {
            guard let parts = URLComponents(string: text), let scheme = parts.scheme,
                  scheme == "postgres" || scheme == "postgresql" else {
                throw WorkerError.badDatabaseURL("\(text): expected postgres://user@host:port/database")
            }
            user = parts.user.flatMap { $0.removingPercentEncoding } ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
            password = parts.password?.removingPercentEncoding
            let path = String(parts.path.drop(while: { $0 == "/" }))
            database = path.isEmpty ? nil : path
            let query = Dictionary((parts.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
            port = parts.port ?? Int(query["port"] ?? "") ?? 5432
            host = parts.host ?? "localhost"
            if let directory = query["host"], directory.hasPrefix("/") { socket = "\(directory)/.s.PGSQL.\(port)" }
            sslmode = query["sslmode"] ?? "prefer"
            applicationName = query["application_name"] ?? "flipbook-worker"
        }
    }
}

public enum WorkerError: Error, CustomStringConvertible {
    case badDatabaseURL(String)
    case migration(String)

    public var description: String {
        switch self {
        case .badDatabaseURL(let text): "bad --database: \(text)"
        case .migration(let text): "migration failed: \(text)"
        }
    }
}
