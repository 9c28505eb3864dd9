import Foundation
import PostgresNIO

/// `--database URL` -> a PostgresNIO client configuration.
///
/// `postgres://user:password@host:port/database`, or a unix socket as libpq spells it:
/// `postgres://user@/database?host=/run/postgresql` (the socket file is `<host>/.s.PGSQL.<port>`).
/// `?sslmode=disable|prefer|require` chooses TLS over TCP (default prefer). `?application_name=` names the
/// connections in `pg_stat_activity` as libpq's does; a worker's are `flipbook-worker` unless it says otherwise.
public enum DatabaseURL {
    public static func configuration(_ text: String) throws -> PostgresClient.Configuration {
        guard let parts = URLComponents(string: text), let scheme = parts.scheme,
              scheme == "postgres" || scheme == "postgresql" else {
            throw WorkerError.badDatabaseURL("\(text): expected postgres://user@host:port/database")
        }
        let user = parts.user.flatMap { $0.removingPercentEncoding } ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        let password = parts.password?.removingPercentEncoding
        let database = String(parts.path.drop(while: { $0 == "/" }))
        let query = Dictionary((parts.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let port = parts.port ?? Int(query["port"] ?? "") ?? 5432
        var configuration: PostgresClient.Configuration
        if let directory = query["host"], directory.hasPrefix("/") {
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: user, password: password,
                                  database: database.isEmpty ? nil : database)
        } else {
            let tls: PostgresClient.Configuration.TLS
            switch query["sslmode"] ?? "prefer" {
            case "disable": tls = .disable
            case "require", "verify-full": tls = .require(.makeClientConfiguration())
            default: tls = .prefer(.makeClientConfiguration())
            }
            configuration = .init(host: parts.host ?? "localhost", port: port, username: user, password: password,
                                  database: database.isEmpty ? nil : database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = [("application_name", query["application_name"] ?? "flipbook-worker")]
        return configuration
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
