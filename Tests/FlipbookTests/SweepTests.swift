import Foundation
import FlipbookTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every corpus file through every command that applies, each in its own `flipbook` process with a
/// timeout: no signal (crash or trap), no timeout (hang), every failure exit 1 with a worded message on
/// stderr, and the child's peak RSS (wait4's ru_maxrss) at most 300 MB. Small sizes and few segments keep
/// it to a few minutes; two processes run at once.
@Suite(.serialized, .offPool) struct SweepTests {
    static let binary = Corpus.packageRoot.appendingPathComponent(".build/debug/flipbook").path
    static let maxRSSKB = 300 * 1024
    static let timeoutSeconds = 120.0

    struct Job: Sendable {
        let file: String  // corpus-relative
        let command: String
        let arguments: [String]
    }

    struct Outcome: Sendable {
        var job: Job
        var status: Int32 = 0
        var signal: Int32 = 0
        var timedOut = false
        var rssKB = 0
        var seconds = 0.0
        var stderr = ""
        var problem: String? {
            if timedOut { return "timed out after \(Int(SweepTests.timeoutSeconds)) s" }
            if signal != 0 { return "killed by signal \(signal)" }
            if status != 0 && status != 1 { return "exit status \(status)" }
            if status == 1 {
                // A typed error is printed as "flipbook: <input>: <message>"; a bare status is not enough.
                let text = stderr.trimmingCharacters(in: .whitespacesAndNewlines)
                guard text.contains("flipbook:"), text.count > 20 else { return "exit 1 without an error message: \(text)" }
                if text.contains("Fatal error") || text.contains("FlipbookError(") { return "error is a Swift dump: \(text)" }
            }
            if rssKB > SweepTests.maxRSSKB { return "peak RSS \(rssKB / 1024) MB over \(SweepTests.maxRSSKB / 1024) MB" }
            return nil
        }
    }

    /// The commands for one corpus file, by its folder; `nil` with a reason when a command does not apply.
    static func arguments(_ command: String, _ entry: Corpus.Entry, out: String) -> [String]? {
        let input = entry.url.path
        switch (command, entry.folder) {
        case ("probe", _): return ["probe", input]  // human output: errors go to stderr
        case ("thumb", _): return ["thumb", input, "-o", out + ".jpg", "--size", "96", "--jobs", "1"]
        case ("frames", "gif"): return ["frames", input, "-o", out, "--size", "48", "--every", "8", "--format", "jpeg"]
        case ("convert", "gif"): return ["convert", input, "-o", out + ".mp4", "--preset", "ultrafast", "--max-size", "128", "--jobs", "1"]
        case ("poster", "video"): return ["poster", input, "-o", out + ".jpg", "--size", "96"]
        case ("preview", "video"): return ["preview", input, "-o", out + ".mp4", "--segments", "2", "--segment-length", "500ms", "--size", "96"]
        case ("storyboard", "video"): return ["storyboard", input, "-o", out, "--count", "6", "--size", "48"]
        case ("bundle", "video"):
            return ["bundle", input, "--poster", out + "-p.jpg", "--poster-size", "96", "--storyboard", out + "-sb", "--interval", "2s",
                    "--preview", out + "-v.mp4", "--preview-size", "96"]
        default: return nil
        }
    }

    static let commands = ["probe", "thumb", "frames", "convert", "poster", "preview", "storyboard", "bundle"]
    /// Why pairs are skipped: the command refuses the type at once. One file of each other type still goes
    /// through each such command, to check the refusal is a typed error.
    static let skipReason = "frames and convert take GIFs; poster, preview, storyboard and bundle take videos"

    static func jobs(in dir: TemporaryDirectory) -> (jobs: [Job], skipped: Int) {
        var jobs: [Job] = [], skipped = 0
        var refusalChecked = Set<String>()
        for (k, entry) in Corpus.entries.enumerated() {
            for command in commands {
                let out = dir.path("\(k)-\(command)")
                if let args = arguments(command, entry, out: out) {
                    jobs.append(Job(file: entry.path, command: command, arguments: args))
                } else if refusalChecked.insert("\(command) \(entry.folder)").inserted {
                    // The refusal itself: run the command as if the file were of its type.
                    let args: [String]
                    switch command {
                    case "frames", "storyboard": args = [command, entry.url.path, "-o", out]
                    case "bundle": args = [command, entry.url.path, "--poster", out + ".jpg"]
                    default: args = [command, entry.url.path, "-o", out + (command == "convert" || command == "preview" ? ".mp4" : ".jpg")]
                    }
                    jobs.append(Job(file: entry.path, command: command + " (refusal)", arguments: args))
                } else {
                    skipped += 1
                }
            }
        }
        return (jobs, skipped)
    }

    /// Runs one job: stdout to /dev/null, stderr to a file, under GNU time, which forks a small process that
    /// then runs flipbook and reports that process's own peak RSS. (posix_spawn's vfork makes the child's
    /// ru_maxrss start at the test process's high-water mark, which the kernel carries across exec.)
    static func run(_ job: Job, stderrPath: String) -> Outcome {
        var outcome = Outcome(job: job)
        let rssPath = stderrPath + ".rss"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // Its own process group, so a timeout kills flipbook as well as time.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let time = "/usr/bin/time"
        let argv = ([time, "-f", "%M", "-o", rssPath, binary] + job.arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let started = Date()
        guard posix_spawn(&pid, time, &actions, &attributes, argv, environ) == 0 else {
            outcome.stderr = "flipbook: posix_spawn of /usr/bin/time failed"
            outcome.status = 127
            return outcome
        }
        var status: Int32 = 0
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { break }
            if done < 0 && errno != EINTR { break }
            if Date().timeIntervalSince(started) > timeoutSeconds, !outcome.timedOut {
                outcome.timedOut = true
                kill(-pid, SIGKILL)
            }
            usleep(5_000)
        }
        outcome.seconds = Date().timeIntervalSince(started)
        // GNU time writes "Command terminated by signal N" (then exits 128 + N) or "Command exited with
        // non-zero status N" before the figure; the last line is the peak RSS in KB.
        let report = ((try? String(contentsOfFile: rssPath, encoding: .utf8)) ?? "").split(separator: "\n")
        outcome.rssKB = report.last.flatMap { Int(String($0).trimmingCharacters(in: .whitespaces)) } ?? 0
        let termSignal = status & 0x7f
        if termSignal != 0 && termSignal != 0x7f {
            outcome.signal = termSignal
        } else if let line = report.first(where: { $0.hasPrefix("Command terminated by signal ") }),
                  let signal = Int32(line.dropFirst("Command terminated by signal ".count)) {
            outcome.signal = signal
        } else {
            outcome.status = (status >> 8) & 0xff
        }
        outcome.stderr = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return outcome
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage),
          .enabled(if: FileManager.default.isExecutableFile(atPath: binary), "flipbook is not built (swift build)"))
    func everyCorpusFileThroughEveryCommand() throws {
        let dir = try TemporaryDirectory()
        let (jobs, skipped) = Self.jobs(in: dir)
        let results = Results()
        let next = Results.Counter()
        let root = dir.url.path
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            while let k = next.take(below: jobs.count) {
                results.add(Self.run(jobs[k], stderrPath: "\(root)/stderr-\(k).txt"))
            }
        }
        let outcomes = results.all
        #expect(outcomes.count == jobs.count)
        let failures = outcomes.filter { $0.status == 1 }.count
        let slowest = outcomes.max { $0.seconds < $1.seconds }
        let largest = outcomes.max { $0.rssKB < $1.rssKB }
        print("sweep: \(jobs.count) runs (\(skipped) pairs skipped: \(Self.skipReason)); \(failures) typed failures; "
              + "slowest \(slowest.map { "\($0.job.command) \($0.job.file) \(String(format: "%.1f", $0.seconds)) s" } ?? "-"); "
              + "largest peak RSS \(largest.map { "\($0.rssKB / 1024) MB, \($0.job.command) \($0.job.file)" } ?? "-")")
        var perCommand: [String: Double] = [:]
        for outcome in outcomes { perCommand[outcome.job.command, default: 0] += outcome.seconds }
        print("sweep: seconds per command: " + perCommand.sorted { $0.key < $1.key }.map { "\($0.key) \(Int($0.value))" }.joined(separator: ", "))
        print("sweep: slowest: " + outcomes.sorted { $0.seconds > $1.seconds }.prefix(8)
            .map { "\($0.job.command) \($0.job.file) \(String(format: "%.1f", $0.seconds)) s" }.joined(separator: "; "))
        for outcome in outcomes {
            if let problem = outcome.problem {
                Issue.record("\(outcome.job.command) \(outcome.job.file): \(problem)\n\(outcome.stderr.suffix(600))")
            }
        }
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var outcomes: [Outcome] = []
        func add(_ outcome: Outcome) { lock.lock(); outcomes.append(outcome); lock.unlock() }
        var all: [Outcome] { lock.lock(); defer { lock.unlock() }; return outcomes }

        final class Counter: @unchecked Sendable {
            private let lock = NSLock()
            private var value = 0
            func take(below limit: Int) -> Int? {
                lock.lock(); defer { lock.unlock() }
                guard value < limit else { return nil }
                value += 1
                return value - 1
            }
        }
    }
}
