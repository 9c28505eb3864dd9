import Foundation
import FlipbookServer
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// With `cancelOnDisconnect` (the default): a client that goes away cancels the job it waited for, and a
/// client that stays keeps its connection after a cold response, as nginx and imgproxy keep it.
@Suite(.serialized) struct DisconnectTests {
    @Test func coldResponsesKeepTheConnection() async throws {
        let root = try Env.makeRoot("keep-cold")
        let server = try await TestServer(root: root)
        defer { Task { await server.stop() } }
        // Two cold requests (each a job) and a hit, pipelined on one connection; `pipelined` fails if the
        // server closes it before the last response (Hummingbird's inbound-close watch closed it after the first).
        let replies = try await pipelined(port: server.port, [
            ("GET", "/thumb/gray-1000x700.jpg?size=64", []),
            ("GET", "/mp4/\(CachedMediaPathTests.gif)", []),
            ("GET", "/thumb/gray-1000x700.jpg?size=64", []),
        ])
        #expect(replies.map(\.status) == [200, 200, 200])
        #expect(replies.allSatisfy { $0.header("Connection") == nil }, "\(replies.map { $0.header("Connection") ?? "-" })")
        #expect(replies[1].header("Content-Type") == "video/mp4")
        #expect(server.server.service.jobsRun["thumb"] == 1 && server.server.service.jobsRun["mp4"] == 1)
    }

    @Test func aClientThatLeavesCancelsItsJob() async throws {
        let root = try Env.makeRoot("leave")
        let made = try await Env.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=480x360:rate=25", "-t", "8", "-y",
                                                         root + "/long.gif"])
        try #require(made.status == 0)
        let server = try await TestServer(root: root) { $0.service.workers = 1 }
        defer { Task { await server.stop() } }
        let service = server.server.service
        // The client, on a thread of its own (no wait here depends on the cooperative pool): send the request,
        // wait until its job runs on the worker, then close the socket without reading the answer.
        let (ended, end) = AsyncStream<String?>.makeStream()
        let port = server.port
        let client = Thread {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard fd >= 0, connected else { end.yield("cannot connect"); end.finish(); return }
            let request = Array("GET /mp4/long.gif HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            // A request refused before any job starts would leave this loop spinning: two minutes is far past
            // any start here, and only there so a broken server fails the test instead of hanging it.
            let deadline = Date().addingTimeInterval(120)
            while service.queueDepth.running == 0 && service.jobsRun["mp4", default: 0] == 0 && Date() < deadline { usleep(100) }
            let running = service.queueDepth.running == 1
            close(fd)
            end.yield(running ? nil : "the job was not running when the client left (ended already, or never started)")
            end.finish()
        }
        client.start()
        var events = ended.makeAsyncIterator()
        let problem = await events.next() ?? "no word from the client"
        try #require(problem == nil, "\(problem!)")
        // The job stops at its next frame. No deadline: the wait ends when the worker is free again, and a job
        // that was not cancelled would have finished all 200 frames and been cached.
        while service.queueDepth.running > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(service.memoryCacheUsage.count == 0, "the job ran to the end: it was not cancelled")
        #expect(service.jobsRun["mp4"] == 1)
    }
}
