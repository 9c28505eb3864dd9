import Foundation

/// Paths shared by the storage suites.
enum StorageEnv {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The venv's python (FLIPBOOK_PYTHON from `make test`), else .build/venv, else the system's.
    static var python: String {
        if let p = ProcessInfo.processInfo.environment["FLIPBOOK_PYTHON"], FileManager.default.isExecutableFile(atPath: p) { return p }
        let venv = packageRoot.appendingPathComponent(".build/venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/python3"
    }
}
