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
        typealias Configuration = PostgresClient.Configuration
        let url = try Parsed(text)
        var configuration = url.socket.map {
            Configuration(unixSocketPath: $0, username: url.user, password: url.password, database: url.database)
        } ?? Configuration(host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
                           tls: url.tls(disable: .disable, require: { .require(.makeClientConfiguration()) },
                                        prefer: { .prefer(.makeClientConfiguration()) }))
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = [("application_name", url.applicationName)]
        return configuration
    }

    public static func connectionConfiguration(_ text: String) throws -> PostgresConnection.Configuration {
        typealias Configuration = PostgresConnection.Configuration
        let url = try Parsed(text)
        // The TLS context only for TCP: building one reads the system's trust store.
        var configuration = try url.socket.map {
            Configuration(unixSocketPath: $0, username: url.user, password: url.password, database: url.database)
        } ?? Configuration(host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
                           tls: url.tls(disable: .disable,
                                        require: { .require(try NIOSSLContext(configuration: .makeClientConfiguration())) },
                                        prefer: { .prefer(try NIOSSLContext(configuration: .makeClientConfiguration())) }))
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

        /// The TLS choice of `?sslmode=` in either configuration type's terms.
        func tls<T>(disable: T, require: () throws -> T, prefer: () throws -> T) rethrows -> T {
            switch sslmode {
            case "disable": disable
            case "require", "verify-full": try require()
            default: try prefer()
            }
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
