import FlipbookTestSupport
import Foundation
import Testing

/// `flipbook ingest` end to end (the debug binary of this build): the results against ffprobe and Pillow,
/// outputs by content hash, nothing rewritten on a second run, no EXIF/GPS/XMP in any derivative, failures
/// with their codes, recipe files, and paths from standard input.
@Suite(.offPool, .serialized) struct IngestCLITests {
    static let binary = packageRoot.appendingPathComponent(".build/debug/flipbook").path
    static let checks = packageRoot.appendingPathComponent("Tests/ingest/ingest_checks.py").path
    static let corpus = ProcessInfo.processInfo.environment["FLIPBOOK_CORPUS"] ?? packageRoot.appendingPathComponent("../shared/corpus").path
    static var hasCorpus: Bool { FileManager.default.fileExists(atPath: "\(corpus)/MANIFEST.tsv") }

    static func results(_ jsonLines: String) throws -> [[String: Any]] {
        try jsonLines.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    /// width, height and (for MP4) duration in ms, by ffprobe.
    static func ffprobe(_ path: String) throws -> (width: Int, height: Int, durationMs: Int?) {
        let r = try Run.program("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                      "stream=width,height:format=duration", "-of", "json", path])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stderr)")
        let stream = try #require((json["streams"] as? [[String: Any]])?.first, "\(path): no video stream")
        let duration = ((json["format"] as? [String: Any])?["duration"] as? String).flatMap(Double.init)
        return (stream["width"] as! Int, stream["height"] as! Int, path.hasSuffix(".mp4") ? duration.map { Int(($0 * 1000).rounded()) } : nil)
    }

    static func fileIdentity(_ path: String) throws -> String {
        let a = try FileManager.default.attributesOfItem(atPath: path)
        return "\(a[.systemFileNumber]!) \((a[.modificationDate] as! Date).timeIntervalSince1970)"
    }

    @Test func ingestsAFolderByContentHashWithoutMetadata() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("uploads"), out = dir.path("out")
        try FileManager.default.createDirectory(atPath: input + "/nested", withIntermediateDirectories: true)
        for name in ["testsrc-rotated-exif6.jpg", "alpha-640x480.png", "testsrc-160x120-2s.gif", "testsrc2-480x270-4s.mp4", "cellauto-400x300.webp"] {
            try FileManager.default.copyItem(atPath: packageRoot.appendingPathComponent("samples/\(name)").path, toPath: "\(input)/\(name)")
        }
        // The same bytes under another name share one set of derivatives.
        try FileManager.default.copyItem(atPath: "\(input)/testsrc-160x120-2s.gif", toPath: "\(input)/nested/same.gif")
        // A phone-style JPEG with GPS and XMP, and a phone video with a location atom (corpus).
        let tagged = try Run.program(Run.python, [Self.checks, "tagged-jpeg", "\(input)/nested/phone.jpg"])
        #expect(tagged.status == 0, "\(tagged.stdout)\(tagged.stderr)")
        if Self.hasCorpus {
            try FileManager.default.copyItem(atPath: "\(Self.corpus)/video/jsonize-ffmpeg-task/iphone_rotated.mov", toPath: "\(input)/nested/phone.mov")
        } else {
            print("IngestCLITests: corpus not found (set FLIPBOOK_CORPUS or put it at ../shared/corpus); no phone video")
        }
        try Data("not media, just text\n".utf8).write(to: URL(fileURLWithPath: "\(input)/notes.txt"))
        try Data("hidden".utf8).write(to: URL(fileURLWithPath: "\(input)/.DS_Store"))

        let first = try Run.program(Self.binary, ["ingest", input, "-o", out, "--jobs", "2"])
        #expect(first.status == 1, "a failed source (notes.txt) makes the exit status 1: \(first.stderr)")
        let results = try Self.results(first.stdout)
        let sources = results.map { $0["source"] as! String }
        #expect(Set(sources).count == sources.count && !sources.contains { $0.contains(".DS_Store") }, "\(sources)")
        #expect(results.count == (Self.hasCorpus ? 9 : 8), "\(sources)")

        var derivativeFiles: [String] = []
        for result in results {
            let source = result["source"] as! String
            if source.hasSuffix("notes.txt") {
                let error = try #require(result["error"] as? [String: Any], "\(result)")
                #expect(error["code"] as? String == "unknown-format" && (error["message"] as? String ?? "").count > 10, "\(error)")
                #expect(result["placeholder"] is NSNull && (result["derivatives"] as? [Any])?.isEmpty == true)
                continue
            }
            #expect(result["error"] is NSNull, "\(source): \(result["error"]!)")
            // The source's size: ffprobe reports stored pixels; ours are upright, so compare as a set.
            let probed = try Self.ffprobe(source)
            let width = result["width"] as! Int, height = result["height"] as! Int
            #expect(Set([width, height]) == Set([probed.width, probed.height]), "\(source): \(width)x\(height) vs ffprobe \(probed)")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
            #expect(result["bytes"] as? Int == bytes.count)
            let placeholder = try #require(result["placeholder"] as? [String: Any], "\(source)")
            #expect((placeholder["blurhash"] as? String)?.count == 28 && (placeholder["thumbhash"] as? String) != nil)
            let sha = result["sha256"] as! String
            let derivatives = try #require(result["derivatives"] as? [[String: Any]])
            let names = Set(derivatives.map { $0["name"] as! String })
            switch result["type"] as! String {
            case "jpeg", "png", "webp": #expect(names == ["thumb", "large"], "\(source): \(names)")
            case "gif": #expect(names == ["video", "poster"], "\(source): \(names)")
            default: #expect(names.isSuperset(of: ["poster", "preview", "storyboard", "storyboard-sheet-0"]), "\(source): \(names)")
            }
            for d in derivatives {
                let path = d["path"] as! String
                #expect(path.hasPrefix("\(sha.prefix(2))/\(sha.dropFirst(2).prefix(2))/\(sha)/"), "\(path)")
                let file = "\(out)/\(path)"
                let data = try Data(contentsOf: URL(fileURLWithPath: file))
                #expect(d["bytes"] as? Int == data.count, "\(path)")
                let sum = try Run.program("/usr/bin/sha256sum", [file]).stdout.prefix(64)
                #expect(d["sha256"] as? String == String(sum), "\(path)")
                derivativeFiles.append(file)
                if path.hasSuffix(".vtt") { continue }
                let seen = try Self.ffprobe(file)
                #expect(d["width"] as? Int == seen.width && d["height"] as? Int == seen.height, "\(path): \(d) vs ffprobe \(seen)")
                #expect(max(seen.width, seen.height) <= (d["name"] as! String == "large" ? 1280 : 320), "\(path)")
                if let ms = seen.durationMs {
                    #expect(abs((d["durationMs"] as! Int) - ms) <= 50, "\(path): \(d["durationMs"]!) ms vs ffprobe \(ms)")
                }
            }
        }
        let same = results.filter { ($0["source"] as! String).hasSuffix("same.gif") || ($0["source"] as! String).hasSuffix("testsrc-160x120-2s.gif") }
        #expect(same.count == 2 && (same[0]["derivatives"] as! [[String: Any]]).map { $0["path"] as! String }
                    == (same[1]["derivatives"] as! [[String: Any]]).map { $0["path"] as! String })

        // No EXIF, GPS or XMP in any derivative (Pillow, ffprobe and the bytes).
        let metadata = try Run.program(Run.python, [Self.checks, "metadata"] + Set(derivativeFiles).sorted())
        #expect(metadata.status == 0, "\(metadata.stdout)\(metadata.stderr)")

        // Again: the same results, and not one file rewritten.
        let before = try Dictionary(uniqueKeysWithValues: Set(derivativeFiles).map { ($0, try Self.fileIdentity($0)) })
        let second = try Run.program(Self.binary, ["ingest", input, "-o", out, "--jobs", "2", "--manifest", dir.path("manifest.jsonl")])
        #expect(second.status == 1 && second.stdout.isEmpty)
        let manifest = try String(contentsOfFile: dir.path("manifest.jsonl"), encoding: .utf8)
        #expect(Set(manifest.split(separator: "\n")) == Set(first.stdout.split(separator: "\n")))
        for (file, identity) in before { #expect(try Self.fileIdentity(file) == identity, "\(file) was rewritten") }
    }

    /// `--manifest` in a folder not made yet is written (its folder made); one naming a folder is refused
    /// before any work, where the whole batch's results used to be lost after it.
    @Test func manifestFolderIsMadeOrRefusedBeforeTheWork() throws {
        let dir = try TemporaryDirectory()
        let sample = packageRoot.appendingPathComponent("samples/gray-1000x700.jpg").path
        let made = try Run.program(Self.binary, ["ingest", sample, "-o", dir.path("out"), "--recipe", "probe",
                                                 "--manifest", dir.path("new/deeper/m.jsonl")])
        #expect(made.status == 0, "\(made.stderr)")
        let lines = try Self.results(try String(contentsOfFile: dir.path("new/deeper/m.jsonl"), encoding: .utf8))
        #expect(lines.count == 1 && lines.first?["width"] as? Int == 1000, "\(lines)")
        try FileManager.default.createDirectory(atPath: dir.path("folder"), withIntermediateDirectories: true)
        let refused = try Run.program(Self.binary, ["ingest", sample, "-o", dir.path("out2"), "--manifest", dir.path("folder")])
        #expect(refused.status == 64, "\(refused.status) \(refused.stderr)")
        #expect(refused.stderr.contains("is a folder"), "\(refused.stderr)")
        let written = (try? FileManager.default.subpathsOfDirectory(atPath: dir.path("out2"))) ?? []
        #expect(!written.contains { $0.hasSuffix(".webp") || $0.hasSuffix(".jpg") }, "derivatives made before the refusal: \(written)")
    }

    /// A source that fails at one derivative leaves none of the others on disk: the first half of the corpus's
    /// sample.mkv gives a poster but no preview ("no video frame could be decoded"), and its poster stayed.
    @Test(.enabled(if: hasCorpus, "the corpus is not at ../shared/corpus (or FLIPBOOK_CORPUS): test skipped"))
    func aFailedSourceLeavesNoDerivatives() throws {
        let dir = try TemporaryDirectory()
        let whole = try Data(contentsOf: URL(fileURLWithPath: "\(Self.corpus)/video/androidx-media/sample.mkv"))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: dir.path("half.mkv")))
        let run = try Run.program(Self.binary, ["ingest", dir.path("half.mkv"), "-o", dir.path("out")])
        #expect(run.status == 1, "\(run.stdout) \(run.stderr)")
        let result = try #require(try Self.results(run.stdout).first)
        #expect(result["error"] is [String: Any] && (result["derivatives"] as? [Any])?.isEmpty == true, "\(result)")
        let left = ((try? FileManager.default.subpathsOfDirectory(atPath: dir.path("out"))) ?? []).filter { path in
            var folder: ObjCBool = false
            return FileManager.default.fileExists(atPath: dir.path("out/\(path)"), isDirectory: &folder) && !folder.boolValue
        }
        #expect(left.isEmpty, "files left under the output root: \(left)")
    }

    /// An upload cut off in transit (the first 3,000 bytes of a GIF ffmpeg wrote) fails `truncated`, nothing
    /// written; under a recipe with "truncated": "accept" it is made from what there is and the result carries
    /// the decoder's warnings. ffprobe reads the accepted derivative.
    @Test func aTruncatedSourceFailsUnlessItsRecipeAcceptsIt() throws {
        let dir = try TemporaryDirectory()
        let ffmpeg = try Run.program("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=480x360:rate=10", "-t", "4", dir.path("whole.gif")])
        #expect(ffmpeg.status == 0, "\(ffmpeg.stderr)")
        let whole = try Data(contentsOf: URL(fileURLWithPath: dir.path("whole.gif")))
        try whole.prefix(3000).write(to: URL(fileURLWithPath: dir.path("cut.gif")))
        let strict = try Run.program(Self.binary, ["ingest", dir.path("cut.gif"), "-o", dir.path("out")])
        #expect(strict.status == 1, "\(strict.stdout) \(strict.stderr)")
        let failed = try #require(try Self.results(strict.stdout).first)
        #expect((failed["error"] as? [String: Any])?["code"] as? String == "truncated", "\(failed)")
        #expect((failed["derivatives"] as? [Any])?.isEmpty == true, "\(failed)")
        try Data(#"{"recipes": {"lenient": {"still": [{"name": "thumb", "operation": "thumb", "size": 64}], "animation": [{"name": "video", "operation": "video"}], "truncated": "accept"}}}"#.utf8)
            .write(to: URL(fileURLWithPath: dir.path("lenient.json")))
        let lenient = try Run.program(Self.binary, ["ingest", dir.path("cut.gif"), "-o", dir.path("out"), "--recipe", dir.path("lenient.json")])
        #expect(lenient.status == 0, "\(lenient.stdout) \(lenient.stderr)")
        let accepted = try #require(try Self.results(lenient.stdout).first)
        let warnings = accepted["warnings"] as? [String] ?? []
        #expect(!warnings.isEmpty && warnings.contains { $0.contains("incomplete") || $0.contains("stopped") }, "\(accepted)")
        let derivative = try #require((accepted["derivatives"] as? [[String: Any]])?.first)
        let probe = try Self.ffprobe(dir.path("out/\(derivative["path"] as! String)"))
        #expect(probe.width == derivative["width"] as? Int, "\(derivative)")
    }

    @Test func recipeFilesAndStandardInput() throws {
        let dir = try TemporaryDirectory()
        let recipe = dir.path("recipe.json")
        try Data("""
            {"recipes": {"avatars": {"still": [{"name": "square", "operation": "thumb", "size": 64, "fit": "cover", "format": "png"}],
                                     "animation": [{"name": "small", "operation": "video", "size": 80}],
                                     "placeholders": false}}}
            """.utf8).write(to: URL(fileURLWithPath: recipe))
        let list = [packageRoot.appendingPathComponent("samples/mandelbrot-1600x1200.jpg").path,
                    packageRoot.appendingPathComponent("samples/testsrc-160x120-2s.gif").path].joined(separator: "\n") + "\n"
        try Data(list.utf8).write(to: URL(fileURLWithPath: dir.path("list.txt")))
        let run = try Run.program("/bin/sh", ["-c", "\"$0\" ingest - -o \"$1\" --recipe \"$2\" < \"$3\"", Self.binary, dir.path("out"), recipe, dir.path("list.txt")])
        #expect(run.status == 0, "\(run.stderr)")
        let results = try Self.results(run.stdout)
        #expect(results.count == 2)
        for result in results {
            #expect(result["recipe"] as? String == "avatars" && result["placeholder"] is NSNull, "\(result)")
            let d = try #require((result["derivatives"] as? [[String: Any]])?.first, "\(result)")
            let seen = try Self.ffprobe(dir.path("out/\(d["path"] as! String)"))
            if d["name"] as? String == "square" {
                #expect(seen.width == 64 && seen.height == 64 && (d["path"] as! String).hasSuffix("/square.png"), "\(d)")
            } else {
                #expect(d["name"] as? String == "small" && seen.width == 80 && seen.height == 60, "\(d) vs \(seen)")
            }
        }

        // probe: metadata only, nothing written.
        let probe = try Run.program(Self.binary, ["ingest", packageRoot.appendingPathComponent("samples/testsrc2-480x270-4s.mp4").path,
                                                  "-o", dir.path("probe-out"), "--recipe", "probe"])
        let line = try #require(try Self.results(probe.stdout).first)
        #expect(probe.status == 0 && line["durationMs"] as? Int == 4000 && (line["derivatives"] as? [Any])?.isEmpty == true, "\(probe.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("probe-out")).isEmpty)

        // A recipe file with a mistake is refused before any work, with what is wrong.
        try Data(#"{"recipes": {"bad": {"still": [{"name": "x", "operation": "video"}]}}}"#.utf8).write(to: URL(fileURLWithPath: recipe))
        let bad = try Run.program(Self.binary, ["ingest", packageRoot.appendingPathComponent("samples").path, "-o", dir.path("bad-out"), "--recipe", recipe])
        #expect(bad.status != 0 && bad.stdout.isEmpty && bad.stderr.contains("video does not apply to a still"), "\(bad.stderr)")
        let unknown = try Run.program(Self.binary, ["ingest", packageRoot.appendingPathComponent("samples").path, "-o", dir.path("bad-out"), "--recipe", "nonesuch"])
        #expect(unknown.status != 0 && unknown.stderr.contains("neither a built-in recipe"), "\(unknown.stderr)")
    }
}
