import FlipbookTestSupport
import Foundation

/// moto's server (`python -m moto.server`, from the venv) on a free loopback port chosen by the kernel: S3,
/// STS and the other AWS APIs it imitates, for the storage tests. Started by the test that needs it and
/// stopped with ``stop()``; moto keeps nothing across a restart.
final class MotoProcess: @unchecked Sendable {
    let process = Process()
    /// `http://127.0.0.1:PORT`.
    private(set) var url = ""
    private let lock = NSCondition()
    private var log = ""
    private var ended = false

    /// Starts moto and waits until it says which port it listens on (it binds before it says so).
    static func start() throws -> MotoProcess {
        let moto = MotoProcess()
        try moto.launch()
        return moto
    }

    private func launch() throws {
        process.executableURL = URL(fileURLWithPath: Run.python)
        process.arguments = ["-m", "moto.server", "-H", "127.0.0.1", "-p", "0"]
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Drain everything moto prints (it logs every request) until it exits, noting the port on the way.
        let reader = Thread { [self] in
            let handle = output.fileHandleForReading
            while true {
                let data = handle.availableData
                lock.lock()
                if data.isEmpty { ended = true } else { log += String(decoding: data, as: UTF8.self) }
                lock.broadcast()
                lock.unlock()
                if data.isEmpty { return }
            }
        }
        reader.start()
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let range = log.range(of: "Running on http://127.0.0.1:"),
               let end = log[range.upperBound...].firstIndex(where: { !$0.isNumber }) {
                url = "http://127.0.0.1:" + log[range.upperBound..<end]
                return
            }
            if ended {
                throw NSError(domain: "MotoProcess", code: 1, userInfo: [NSLocalizedDescriptionKey: "moto exited before listening: \(log)"])
            }
            lock.wait()
        }
    }

    /// Stops moto and waits for it to exit. SIGKILL, because a child started from a test thread inherits that
    /// thread's blocked signals, SIGTERM among them; moto keeps nothing worth a clean exit.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
