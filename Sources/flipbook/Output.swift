#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Flipbook
import FlipbookStorage

/// Writes `bytes` to `path` atomically (see `AtomicFile.write`), refusing to replace any of `inputs`. Creates
/// the folder it goes in if missing, as `convert` always did: `thumb a.jpg -o out/a.jpg` in a fresh checkout,
/// where `out/` is not there yet, used to do the work and then fail to write it. An `s3://` path is one object
/// (`S3Client.put`: whole or not at all), with the Content-Type its extension names and `metadata`.
func writeAtomically(_ bytes: [UInt8], to path: String, protecting inputs: [String], metadata: [String: String] = [:]) throws {
    switch try StoreLocation(path) {
    case .s3(let bucket, let key):
        guard !inputs.contains(path) else { throw FlipbookError(.invalidArgument, "refusing to overwrite the input \(path)") }
        guard !key.isEmpty, !key.hasSuffix("/") else { throw FlipbookError(.invalidArgument, "\(path) names a prefix, not an object") }
        try S3Context.client().put(S3Object(bucket: bucket, key: key), bytes: bytes, contentType: contentType(forOutput: path),
                                   cacheControl: OutputOptions.cacheControl, metadata: metadata)
    case .http:
        throw FlipbookError(.invalidArgument, "\(path): outputs are files or s3:// URLs")
    case .local:
        try makeParentDirectory(of: path)
        try AtomicFile.write(bytes, to: path, protecting: inputs)
    }
}

/// What outputs carry besides their bytes, for the commands that write to S3.
struct OutputOptions: ParsableArguments {
    @Option(help: "Cache-Control of outputs written to s3:// (as aws s3 cp --cache-control), e.g. 'public, max-age=31536000'.")
    var cacheControl: String?

    /// The value the last parsed command asked for (one command per process).
    nonisolated(unsafe) static var cacheControl: String?

    func validate() throws { Self.cacheControl = cacheControl }
}

/// Makes the folder `path` goes in, if it is not there.
func makeParentDirectory(of path: String) throws {
    let folder = parentDirectory(path)
    if !isDirectory(folder) { try makeDirectory(folder) }
}

/// Prints what the decoder recovered from (a file cut short), one `flipbook: INPUT: warning: ...` line each.
func printWarnings(_ warnings: [String], of input: String) {
    for warning in warnings { printError("flipbook: \(input): warning: \(warning)") }
}

/// The still format an output name's extension asks for: nil without an extension (JPEG then); a usage error
/// for an extension we do not write. `thumb -o t.gif` used to write JPEG bytes under that name, where
/// vipsthumbnail and ffmpeg refuse a name whose format they cannot write.
func stillFormat(of path: String, option: String) throws -> OutputFormat? {
    guard let ext = fileExtension(path) else { return nil }
    guard let format = OutputFormat(fileExtension: ext) else {
        throw ValidationError("\(option) \(path): flipbook writes stills as .jpg, .png or .webp, not .\(ext)")
    }
    return format
}

func isDirectory(_ path: String) -> Bool {
    if path.hasPrefix("s3://") { return path.hasSuffix("/") }
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}

func makeDirectory(_ path: String) throws {
    var partial = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        partial += "/" + component
        if mkdir(partial, 0o755) != 0 && errno != EEXIST {
            throw FlipbookError(.io, "cannot create directory \(partial)", underlying: String(cString: strerror(errno)))
        }
    }
}

func baseName(_ path: String) -> String {
    String(path.split(separator: "/").last ?? Substring(path))
}

func stem(_ path: String) -> String {
    let name = baseName(path)
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
    return String(name[..<dot])
}

func fileExtension(_ path: String) -> String? {
    let name = baseName(path)
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
    return String(name[name.index(after: dot)...])
}

func writeStderr(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

func printError(_ text: String) { writeStderr(text + "\n") }

func printOut(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

/// The message a person should see for an error: ours are already worded, anything else is described.
func describe(_ error: Error) -> String {
    if let error = error as? FlipbookError { return error.description }
    return String(describing: error)
}

/// `flipbook: INPUT: message`, without saying INPUT twice when the message already starts with it (an S3 or
/// URL error names the object, as it must where no input is printed before it).
func failureLine(_ input: String, _ error: Error) -> String {
    let message = describe(error)
    return message.hasPrefix(input + ": ") ? "flipbook: \(message)" : "flipbook: \(input): \(message)"
}

/// A one-line progress bar on a terminal (stderr); silent otherwise.
final class Progress: @unchecked Sendable {
    private let total: Int
    private var done = 0
    private var failed = 0
    private let enabled: Bool
    private var lock = pthread_mutex_t()

    init(total: Int) {
        self.total = total
        enabled = isatty(2) != 0 && total > 1
        pthread_mutex_init(&lock, nil)
    }

    func step(failed didFail: Bool) {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        done += 1
        if didFail { failed += 1 }
        guard enabled else { return }
        let width = 30
        let filled = width * done / max(1, total)
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let text = "\r[\(bar)] \(done)/\(total)" + (failed > 0 ? " (\(failed) failed)" : "") + (done == total ? "\n" : "")
        writeStderr(text)
    }
}


/// A storyboard's sheets (`sheet-N.jpg`, the names its WebVTT cues use) and `storyboard.vtt` in `directory`,
/// each written atomically.
func writeStoryboard(_ board: Storyboard, to directory: String, protecting inputs: [String]) throws {
    for (i, sheet) in board.sheets.enumerated() {
        try writeAtomically(sheet.data, to: "\(directory)/sheet-\(i).jpg", protecting: inputs)
    }
    try writeAtomically(Array(board.webVTT().utf8), to: "\(directory)/storyboard.vtt", protecting: inputs)
}

/// Reads a whole stream (stdin for `-`) into memory, refusing more than `limit` bytes (the library's
/// default input limit) rather than growing without bound.
func readAll(fd: Int32, limit: Int = Limits().maxInputBytes) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw FlipbookError(.io, "cannot read standard input", underlying: String(cString: strerror(errno)))
        }
        if n == 0 { return bytes }
        guard bytes.count + n <= limit else {
            throw FlipbookError(.limitExceeded, "standard input is larger than \(limit) bytes")
        }
        bytes.append(contentsOf: chunk[0..<n])
    }
}

/// Writes all of `bytes` to a stream (stdout for `-`).
func writeAll(_ bytes: [UInt8], fd: Int32) throws {
    var written = 0
    try bytes.withUnsafeBytes { buffer in
        while written < buffer.count {
            let n = write(fd, buffer.baseAddress! + written, buffer.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                throw FlipbookError(.io, "cannot write standard output", underlying: String(cString: strerror(errno)))
            }
            written += n
        }
    }
}
