import AsyncHTTPClient
import Foundation
import FlipbookTestSupport
import Testing

/// A real `flipbook serve` child process: the disk cache across a restart and graceful SIGTERM.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var log = ""
    private(set) var port = 0

    /// Starts `flipbook serve` and waits, on a thread of its own, until it says where it listens (or exits).
    static func start(_ arguments: [String]) async throws -> ServeProcess {
        try await offPool { try ServeProcess(arguments) }
    }

    private init(_ arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: Env.flipbookBinary) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: Env.flipbookBinary])
        }
        process.executableURL = URL(fileURLWithPath: Env.flipbookBinary)
        process.arguments = ["serve"] + arguments + ["--port", "0"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let ready = DispatchSemaphore(value: 0)
        let handle = err.fileHandleForReading
        Thread { [self] in
            var signalled = false
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                lock.lock()
                log += String(decoding: data, as: UTF8.self)
                if !signalled, let range = log.range(of: #"listening on http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression) {
                    let match = log[range]
                    port = Int(match.split(separator: ":").last!.dropLast()) ?? 0
                    signalled = true
                    ready.signal()
                }
                lock.unlock()
            }
            if !signalled { ready.signal() }
        }.start()
        // Signalled when serve prints its address or its stderr ends (it exited): no deadline, as a loaded
        // machine may take long to start a debug build.
        ready.wait()
        guard port > 0 else {
            process.waitUntilExit()
            throw DidNotStart(status: process.terminationStatus, output: output)
        }
    }

    /// `flipbook serve` exited instead of listening.
    struct DidNotStart: Error, CustomStringConvertible {
        let status: Int32
        let output: String
        var description: String { "serve did not start (exit \(status)): \(output)" }
    }

    var output: String {
        lock.lock()
        defer { lock.unlock() }
        return log
    }

    func request(_ target: String) async throws -> (status: Int, body: [UInt8]) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)" + target), timeout: .seconds(300))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), Array(body.readableBytesView))
    }

    func metric(_ series: String) async throws -> Double {
        let text = String(decoding: try await request("/metrics").body, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.split(separator: " ").last ?? "0") ?? 0
        }
        return 0
    }

    /// SIGTERM, then the exit status, awaited off the cooperative pool.
    func terminate() async throws -> Int32 {
        try await offPool { [self] in
            if process.isRunning { kill(process.processIdentifier, SIGTERM) }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }
}

@Suite(.serialized) struct ServeProcessTests {
    @Test func diskCacheSurvivesARestart() async throws {
        let root = try Env.makeRoot("disk")
        let cache = try Env.temporaryFolder("disk-cache")
        let first = try await ServeProcess.start([root, "--disk-cache", cache])
        let made = try await first.request("/mp4/testsrc-160x120-2s.gif")
        let thumb = try await first.request("/thumb/mandelbrot-1600x1200.jpg?size=100")
        #expect(made.status == 200 && thumb.status == 200)
        #expect(try await first.metric("flipbook_jobs_total{kind=\"mp4\"}") == 1)
        #expect(try await first.terminate() == 0)

        // A second process on the same folder serves the same bytes without running a job.
        let second = try await ServeProcess.start([root, "--disk-cache", cache])
        defer { if second.process.isRunning { kill(second.process.processIdentifier, SIGTERM) } }  // on a thrown error
        let again = try await second.request("/mp4/testsrc-160x120-2s.gif")
        let thumbAgain = try await second.request("/thumb/mandelbrot-1600x1200.jpg?size=100")
        #expect(again.status == 200 && again.body == made.body)
        #expect(thumbAgain.body == thumb.body)
        #expect(try await second.metric("flipbook_jobs_total{kind=\"mp4\"}") == 0)
        #expect(try await second.metric("flipbook_jobs_total{kind=\"thumb\"}") == 0)
        #expect(try await second.metric("flipbook_cache_hits_total{cache=\"disk\"}") == 2)
        // Content-addressed objects: the MP4 is stored under its own SHA-256.
        let objects = try FileManager.default.subpathsOfDirectory(atPath: cache + "/objects").filter { $0.count > 60 }
        #expect(objects.count == 2)
        #expect(try await second.terminate() == 0)
    }

    /// Issue 44: `--remote-sources` without `--key`/`--salt` is a usage error (exit 64, as the CLI's other
    /// usage errors), with a message that says why; it never starts listening.
    @Test func remoteSourcesWithoutSigningExit64() async throws {
        let root = try Env.makeRoot("remote-usage")
        for extra in [["--remote-sources"], ["--remote-sources", "--key", "0a0b"]] {
            do {
                let server = try await ServeProcess.start([root] + extra)
                _ = try await server.terminate()
                Issue.record("serve \(extra) started")
            } catch let error as ServeProcess.DidNotStart {
                #expect(error.status == 64, "\(extra): \(error)")
                #expect(error.output.contains("--key"), "\(extra): \(error.output)")
            }
        }
    }

    @Test func sigtermFinishesInFlightRequestsAndExitsZero() async throws {
        let root = try Env.makeRoot("sigterm")
        // A GIF that takes a while to convert (made by ffmpeg): 75 frames at 320x240.
        let slow = root + "/slow.gif"
        let made = try await Env.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "3", "-y", slow])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        // A grace no loaded machine runs out of: the test is that the request finishes, not how fast.
        let server = try await ServeProcess.start([root, "--grace", "600"])
        let inFlight = Task { try await server.request("/mp4/slow.gif") }
        // Wait until the job is running (an event the server reports, however long a loaded machine takes to
        // get there), then ask the server to stop.
        var running = 0.0, finished = 0.0
        while running < 1 && finished < 1 {
            try await Task.sleep(for: .milliseconds(25))
            running = try await server.metric("flipbook_jobs_in_flight")
            finished = try await server.metric("flipbook_jobs_total{kind=\"mp4\"}")
        }
        try #require(running >= 1, "the conversion ended before it was seen running")
        kill(server.process.processIdentifier, SIGTERM)
        let reply = try await inFlight.value
        #expect(reply.status == 200)
        #expect(try await ffprobe(reply.body, suffix: "mp4").codec == "h264")
        #expect(try await server.terminate() == 0, "log: \(server.output)")
    }
}
