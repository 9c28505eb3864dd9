import Foundation
import FlipbookTestSupport
import Testing

/// Issue 22: every shell example in README.md and docs/cli.md that works on samples/ runs, with the
/// `flipbook` this build made, so the examples cannot rot (scripts/doc_examples.py; blocks marked
/// `<!-- not-run: reason -->` are counted as skipped there, with their reason).
@Suite(.serialized, .offPool) struct DocExamplesTests {
    @Test func readmeAndCLIExamplesRunOnTheSamples() throws {
        let root = Corpus.packageRoot.path
        let run = try Run.program("/usr/bin/python3", ["\(root)/scripts/doc_examples.py", "\(root)/.build/debug", root,
                                                      "\(root)/README.md", "\(root)/docs/cli.md"])
        let failures = run.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL") || $0.hasPrefix("     exit") }
        #expect(run.status == 0, "\(failures.joined(separator: "\n"))\n\(run.stderr.suffix(1000))")
        #expect(run.stdout.contains("examples: "), "doc_examples.py printed no summary: \(run.stderr.suffix(1000))")
    }
}
