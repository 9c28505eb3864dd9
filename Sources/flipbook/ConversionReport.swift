#if canImport(Glibc)
import Glibc
#endif
import Flipbook

/// One JSON-lines record per input.
struct ReportLine: Sendable {
    var input: String
    var output: String
    var status = "failed"
    /// Why it failed: `{"code", "message"}` in the JSON, as `probe --json` and `ingest` give it.
    var error: (code: String, message: String)?
    var note: String?
    var inputBytes: Int?
    var outputBytes: Int?
    var frames: Int?
    var encodedFrames: Int?
    var durationMs: Int?
    var loopCount: Int?
    /// The crf of the encode written and its SSIM against its own input frames (when measured).
    var crf: Int?
    var ssim: Double?
    var milliseconds = 0

    var ratio: Double? {
        guard let i = inputBytes, let o = outputBytes, o > 0 else { return nil }
        return Double(i) / Double(o)
    }

    var json: String {
        func n(_ v: Int?) -> String { v.map(String.init) ?? "null" }
        func s(_ v: String?) -> String { v.map(JSON.string) ?? "null" }
        let r = ratio.map { String(Double(Int($0 * 100)) / 100) } ?? "null"
        return "{\"input\":\(s(input)),\"output\":\(s(output)),\"status\":\(s(status)),\"error\":\(error.map { "{\"code\":\(s($0.code)),\"message\":\(s($0.message))}" } ?? "null"),"
            + "\"note\":\(s(note)),\"inputBytes\":\(n(inputBytes)),\"outputBytes\":\(n(outputBytes)),\"ratio\":\(r),"
            + "\"frames\":\(n(frames)),\"encodedFrames\":\(n(encodedFrames)),\"durationMs\":\(n(durationMs)),"
            + "\"loopCount\":\(n(loopCount)),\"crf\":\(n(crf)),\"ssim\":\(ssim.map { String(Double(Int($0 * 10000)) / 10000) } ?? "null"),"
            + "\"ms\":\(milliseconds)}"
    }
}

/// Appends report lines from any worker; each line is written whole.
final class ReportWriter: @unchecked Sendable {
    private let fd: Int32
    private var lock = pthread_mutex_t()

    init(path: String) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FlipbookError(.io, "cannot write the report \(path)", underlying: String(cString: strerror(errno))) }
        pthread_mutex_init(&lock, nil)
    }

    func append(_ line: ReportLine) {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        var text = line.json + "\n"
        text.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
    }

    deinit { close(fd) }
}

/// Counts, bytes saved and ETA: a redrawn line on a terminal, one plain line per file otherwise.
final class ConversionProgress: @unchecked Sendable {
    private let total: Int
    private var done = 0, failed = 0, skipped = 0, kept = 0, notAnimations = 0
    private var bytesIn = 0, bytesOut = 0
    private let started = monotonicMs()
    private let terminal = isatty(2) != 0
    private var lock = pthread_mutex_t()

    init(total: Int) {
        self.total = total
        pthread_mutex_init(&lock, nil)
    }

    func step(_ line: ReportLine) {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        done += 1
        switch line.status {
        case "failed": failed += 1
        case "skipped" where line.note?.hasPrefix("not a GIF") == true: notAnimations += 1
        case "skipped": skipped += 1
        case "kept-gif", "kept-original": kept += 1
        default:
            bytesIn += line.inputBytes ?? 0
            bytesOut += line.outputBytes ?? 0
        }
        let elapsed = monotonicMs() - started
        let eta = done > 0 ? (elapsed * (total - done) / done) / 1000 : 0
        let saved = Self.size(bytesIn - bytesOut)
        if terminal {
            let width = 28, filled = width * done / max(1, total)
            writeStderr("\r[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(done)/\(total)"
                        + " saved \(saved), \(failed) failed, ETA \(eta)s   " + (done == total ? "\n" : ""))
        } else {
            printError("[\(done)/\(total)] \(line.status): \(line.input)\(Self.outcome(line))")
        }
    }

    /// What happened to one file, for the per-file line: how much smaller the video is, or where the GIF stayed.
    static func outcome(_ line: ReportLine) -> String {
        switch line.status {
        case "kept-gif", "kept-original":
            let kind = line.status == "kept-gif" ? "GIF" : "original"
            return line.output == line.input || line.note?.contains("kept where it is") == true
                ? " (the \(kind) is smaller: kept where it is)" : " (the \(kind) is smaller: copied to \(line.output))"
        case "converted":
            // The decoder's warnings (a GIF cut short ends with the frames it has) were in the report only.
            let note = line.note.map { "; \($0)" } ?? ""
            guard let r = line.ratio else { return line.note.map { " (\($0))" } ?? "" }
            // Under 2x as a percentage: a 1.09 ratio read "1.0x smaller".
            if r >= 2 { return " (\(String(format1: r))x smaller\(note))" }
            if r >= 1 { return " (\(Int(((1 - 1 / r) * 100).rounded(.down)))% smaller\(note))" }
            return r > 0.5 ? " (\(Int(((1 / r - 1) * 100).rounded(.up)))% larger\(note))" : " (\(String(format1: 1 / r))x larger\(note))"
        default:
            return line.note.map { " (\($0))" } ?? ""
        }
    }

    func summary() {
        let converted = done - failed - skipped - kept - notAnimations
        var text = "\(converted) converted"
        if kept > 0 { text += ", \(kept) kept as the original (smaller than the video)" }
        text += ", \(skipped) up to date, \(failed) failed"
        // Objects under an S3 prefix are sniffed when their job runs: the still ones are skipped there.
        if notAnimations > 0 { text += ", \(notAnimations) not animations" }
        if converted + kept > 0 { text += "; \(Self.size(bytesIn)) of animations became \(Self.size(bytesOut))" }
        printError(text)
    }

    /// Bytes for people: bytes under 1 KB, KB under 0.1 MB (never "0.0 MB"), else MB with two decimals.
    static func size(_ bytes: Int) -> String {
        if abs(bytes) < 1000 { return "\(bytes) bytes" }
        if abs(bytes) < 100_000 { return "\(String(format1: Double(bytes) / 1000)) KB" }
        return "\(Double(bytes / 10_000) / 100) MB"
    }
}

extension String {
    /// One decimal, rounded down: 1.96 -> "1.9" (a ratio never reads better than it is).
    init(format1 value: Double) {
        let tenths = Int((abs(value) * 10).rounded(.down))
        self = (value < 0 ? "-" : "") + "\(tenths / 10).\(tenths % 10)"
    }
}
