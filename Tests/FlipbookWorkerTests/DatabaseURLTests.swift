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
    }
}
