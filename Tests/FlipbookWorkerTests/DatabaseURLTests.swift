import FlipbookWorker
import XCTest

final class DatabaseURLTests: XCTestCase {
    func testUnixSocketURL() throws {
        let configuration = try DatabaseURL.configuration("postgres://app@/media?host=/run/postgresql&port=5433")
        XCTAssertEqual(configuration.unixSocketPath, "/run/postgresql/.s.PGSQL.5433")
        XCTAssertEqual(configuration.username, "app")
        XCTAssertEqual(configuration.database, "media")
    }

    func testTCPURL() throws {
        let configuration = try DatabaseURL.configuration("postgresql://app:s%40cret@db.internal:6432/media?sslmode=disable")
        XCTAssertEqual(configuration.host, "db.internal")
        XCTAssertEqual(configuration.port, 6432)
        XCTAssertEqual(configuration.password, "s@cret")
    }

    func testApplicationNameIsFlipbookWorkerUnlessTheURLNamesOne() throws {
        // The kill scenario in queue_tests.py finds the workers' connections in pg_stat_activity by this name.
        let plain = try DatabaseURL.configuration("postgres://app@/media?host=/run/postgresql")
        XCTAssertEqual(plain.options.additionalStartupParameters.map { "\($0.0)=\($0.1)" }, ["application_name=flipbook-worker"])
        let named = try DatabaseURL.configuration("postgres://app@db/media?application_name=ingest%20eu-1")
        XCTAssertEqual(named.options.additionalStartupParameters.map { "\($0.0)=\($0.1)" }, ["application_name=ingest eu-1"])
    }

    func testRejectsOtherSchemes() {
        XCTAssertThrowsError(try DatabaseURL.configuration("mysql://app@db/media"))
        XCTAssertThrowsError(try DatabaseURL.connectionConfiguration("mysql://app@db/media"))
    }

    /// The worker's own connections (`Session`) go where its pool's go, as the same user, named the same.
    func testSessionConnectionsMatchThePool() throws {
        for url in ["postgres://app@/media?host=/run/postgresql&port=5433",
                    "postgresql://app:s%40cret@db.internal:6432/media?sslmode=disable&application_name=ingest%20eu-1",
                    "postgres://app@db/media"] {
            let pool = try DatabaseURL.configuration(url), own = try DatabaseURL.connectionConfiguration(url)
            XCTAssertEqual(own.unixSocketPath, pool.unixSocketPath, url)
            XCTAssertEqual(own.host, pool.host, url)
            XCTAssertEqual(own.port, pool.port, url)
            XCTAssertEqual(own.username, pool.username, url)
            XCTAssertEqual(own.password, pool.password, url)
            XCTAssertEqual(own.database, pool.database, url)
            XCTAssertEqual(own.options.connectTimeout, .seconds(5), url)
            XCTAssertEqual(own.options.additionalStartupParameters.map { "\($0.0)=\($0.1)" },
                           pool.options.additionalStartupParameters.map { "\($0.0)=\($0.1)" }, url)
        }
        XCTAssertEqual(try DatabaseURL.connectionConfiguration("postgres://app@/media?host=/run/postgresql").unixSocketPath,
                       "/run/postgresql/.s.PGSQL.5432")
    }
}
