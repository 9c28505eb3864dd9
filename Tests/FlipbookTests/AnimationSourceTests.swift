import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// The independent references for animated WebP and APNG (Tests/oracle/anim_reference.py): Pillow, and
/// headless Chromium's ImageDecoder over the DevTools protocol. Never our own decoder.
enum AnimReference {
    static let script = Corpus.packageRoot.appendingPathComponent("Tests/oracle/anim_reference.py").path
    static let fixtureScript = Corpus.packageRoot.appendingPathComponent("Tests/oracle/make_anim_fixtures.py").path

    /// $FLIPBOOK_PYTHON (set by `make test`), else the project's venv, else Debian's python3.
    static let python: String = {
        if let env = ProcessInfo.processInfo.environment["FLIPBOOK_PYTHON"], FileManager.default.isExecutableFile(atPath: env) {
            return env
        }
        let venv = Corpus.packageRoot.appendingPathComponent(".build/venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/python3"
    }()

    /// Chromium and the venv's websocket-client are both present.
    static let chromiumAvailable: Bool = {
        guard Run.which("chromium") != nil else { return false }
        return (try? Run.program(python, ["-c", "import websocket"]).status) == 0
    }()
    static let chromiumSkip: Comment = "chromium or the venv's websocket-client is missing (make venv): Chromium reference skipped"

    struct Frames {
        var format: String
        var width: Int, height: Int
        var loop: Int?
        /// Stored durations, ms.
        var durations: [Int]
        /// RGBA, straight alpha, full canvas.
        var frames: [Image]
    }

    /// The reference's frames of `path`; nil if it cannot decode the file.
    static func frames(_ path: String, chromium: Bool) throws -> Frames? {
        let dir = try TemporaryDirectory()
        let out = dir.path("frames.bin")
        var result = try Run.program(python, [script, "frames", path, out] + (chromium ? ["--chromium"] : []))
        if result.status != 0 && result.status != 3 && chromium {  // a headless browser now and then fails to start
            result = try Run.program(python, [script, "frames", path, out, "--chromium"])
        }
        if result.status == 3 { return nil }
        guard result.status == 0 else { throw FlipbookError(.io, "anim_reference.py failed: \(result.stderr)") }
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        guard let newline = data.firstIndex(of: 0x0A),
              let meta = try JSONSerialization.jsonObject(with: data[..<newline]) as? [String: Any],
              let w = meta["width"] as? Int, let h = meta["height"] as? Int, let n = meta["frames"] as? Int
        else { throw FlipbookError(.io, "bad anim_reference.py output") }
        let size = w * h * 4
        let pixels = data[(newline + 1)...]
        guard pixels.count == n * size else { throw FlipbookError(.io, "anim_reference.py gave \(pixels.count) bytes") }
        let frames = (0..<n).map { k in
            Image(width: w, height: h, channels: 4, pixels: Array(pixels[(pixels.startIndex + k * size)..<(pixels.startIndex + (k + 1) * size)]))
        }
        return Frames(format: meta["format"] as? String ?? "", width: w, height: h, loop: meta["loop"] as? Int,
                      durations: (meta["durations"] as? [Int]) ?? [], frames: frames)
    }

    /// Mean and worst-frame SSIM of `video` against the reference's frames over white, at the same instants.
    static func ssim(video: String, source: String, chromium: Bool) throws -> (mean: Double, min: Double) {
        var result = try Run.program(python, [script, "ssim", video, source] + (chromium ? ["--chromium"] : []))
        if result.status != 0 && chromium { result = try Run.program(python, [script, "ssim", video, source, "--chromium"]) }
        guard result.status == 0 else { throw FlipbookError(.io, "anim_reference.py ssim failed: \(result.stderr)") }
        let values = result.stdout.split(separator: " ").map { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 }
        return (values[0], values[1])
    }

    /// APNG and animated WebP files that the corpus lacks, made by Pillow's writers (make_anim_fixtures.py):
    /// compose.png (dispose PREVIOUS/BACKGROUND, blend OVER, a 0 ms frame, 3 plays), default-image.png (an
    /// IDAT image outside the animation), compose.webp.
    static func fixtures() throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory()
        let result = try Run.program("/usr/bin/python3", [fixtureScript, dir.url.path])
        guard result.status == 0 else { throw FlipbookError(.io, "make_anim_fixtures.py failed: \(result.stderr)") }
        return dir
    }

    /// The animated WebP and APNG files of the corpus (sniffed from their bytes, not their names).
    static var corpusAnimations: [Corpus.Entry] {
        Corpus.entries.filter { entry in
            guard entry.folder == "webp" || entry.folder == "png", let source = try? FileByteSource(path: entry.url.path) else { return false }
            return [.animatedWebP, .apng].contains(MediaType.sniff(source))
        }
    }

    /// Our frames through `FrameSources`, copied out.
    static func ours(_ path: String) throws -> (info: AnimationInfo, frames: [Image], warnings: [String]) {
        let source = try FrameSources.open(try FileByteSource(path: path))
        var frames: [Image] = []
        try source.forEachFrame { _, canvas in
            frames.append(Image(width: source.info.width, height: source.info.height, channels: 4, pixels: Array(canvas)))
            return true
        }
        return (source.info, frames, source.warnings)
    }

    /// Mean and largest per-channel difference of two RGBA images composited over white.
    static func difference(_ a: Image, _ b: Image) -> (mean: Double, max: Int) {
        let fa = a.flattened(), fb = b.flattened()
        var total = 0, worst = 0
        for i in 0..<fa.pixels.count {
            let d = abs(Int(fa.pixels[i]) - Int(fb.pixels[i]))
            total += d
            worst = max(worst, d)
        }
        return (Double(total) / Double(max(1, fa.pixels.count)), worst)
    }
}

@Suite(.serialized, .offPool) struct AnimationSourceTests {
    /// Expected rejections among the corpus's animated WebP/APNG files, with the reason. None today.
    static let expectedRejections: [String: String] = [:]

    /// Numbers the MANIFEST's note states: "N frames" and the loop ("loop=infinite", "loop=3", "plays=inf").
    static func manifestFacts(_ note: String) -> (frames: Int?, loop: Int?) {
        let words = note.replacingOccurrences(of: ",", with: " ").split(separator: " ").map(String.init)
        var frames: Int?
        for (i, w) in words.enumerated() where w == "frames" && i > 0 { frames = Int(words[i - 1]) ?? frames }
        var loop: Int?
        for w in words {
            for key in ["loop=", "plays="] where w.hasPrefix(key) {
                let v = String(w.dropFirst(key.count))
                loop = v.hasPrefix("inf") ? 0 : Int(v)
            }
        }
        return (frames, loop)
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func everyCorpusAnimationDecodesWithTheManifestsAndPillowsFacts() throws {
        let entries = AnimReference.corpusAnimations
        #expect(entries.count >= 6, "the corpus's animated WebP and APNG files")
        for entry in entries {
            let path = entry.url.path
            let ours: (info: AnimationInfo, frames: [Image], warnings: [String])
            do {
                ours = try AnimReference.ours(path)
            } catch {
                #expect(Self.expectedRejections[entry.path] != nil, "\(entry.path) rejected: \(error)")
                continue
            }
            #expect(Self.expectedRejections[entry.path] == nil, "\(entry.path) is listed as rejected but decodes")
            let facts = Self.manifestFacts(entry.note)
            #expect(facts.frames == ours.info.frameCount && ours.frames.count == ours.info.frameCount, "\(entry.path): \(entry.note)")
            #expect(facts.loop == ours.info.loopCount, "\(entry.path): loop \(String(describing: ours.info.loopCount)) vs \(entry.note)")
            let pillow = try #require(try AnimReference.frames(path, chromium: false), "Pillow cannot read \(entry.path)")
            #expect(pillow.frames.count == ours.info.frameCount && pillow.loop == ours.info.loopCount, "\(entry.path)")
            #expect(pillow.durations.map(AnimationTiming.displayedMilliseconds) == ours.info.durationsMs, "\(entry.path)")
            #expect(ours.info.durationMs == ours.info.durationsMs.reduce(0, +) && ours.warnings.isEmpty, "\(entry.path)")
        }
    }

    /// Every composited frame at full size against the reference, over white. libwebp composites both
    /// sides of the WebP comparison; for APNG the reference's compositing is its own.
    func compareFrames(_ path: String, chromium: Bool, what: String, meanBound: Double = 0.5, maxBound: Int = 3) throws {
        let ours = try AnimReference.ours(path)
        let reference = try #require(try AnimReference.frames(path, chromium: chromium), "\(what): the reference cannot read it")
        #expect(reference.frames.count == ours.frames.count, "\(what): \(reference.frames.count) reference frames, \(ours.frames.count) ours")
        #expect(reference.width == ours.info.width && reference.height == ours.info.height, "\(what)")
        #expect(reference.durations.map(AnimationTiming.displayedMilliseconds) == ours.info.durationsMs, "\(what)")
        #expect(reference.loop == ours.info.loopCount, "\(what): loop \(String(describing: reference.loop))")
        for (k, (a, b)) in zip(ours.frames, reference.frames).enumerated() {
            let d = AnimReference.difference(a, b)
            // Pillow and Chromium round OVER blending and 16-bit samples their own ways: a level or two.
            #expect(d.mean < meanBound && d.max <= maxBound, "\(what) frame \(k): mean \(d.mean), max \(d.max)")
        }
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func corpusFramesMatchPillow() throws {
        for entry in AnimReference.corpusAnimations { try compareFrames(entry.url.path, chromium: false, what: "\(entry.path) vs Pillow") }
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage), .enabled(if: AnimReference.chromiumAvailable, AnimReference.chromiumSkip))
    func corpusFramesMatchChromium() throws {
        for entry in AnimReference.corpusAnimations { try compareFrames(entry.url.path, chromium: true, what: "\(entry.path) vs Chromium") }
    }

    /// Dispose PREVIOUS and BACKGROUND, blend OVER with partial alpha, sub-frames, a 0 ms frame, the default
    /// image rule: Pillow-made files against Chromium (exact to a level or so) and Pillow. Pillow 9.4 blends
    /// APNG OVER frames with `paste(frame, box, mask=frame)`, a linear mix of every channel alpha included,
    /// which is not the specification's Porter-Duff OVER where a translucent pixel lands on a translucent
    /// canvas (measured: up to 67 levels off over white, where Chromium and we agree within 3). Against
    /// Pillow, APNGs therefore get a loose bound; WebP (libwebp composites for both) stays strict.
    @Test(.enabled(if: AnimReference.chromiumAvailable, AnimReference.chromiumSkip))
    func fixtureFramesMatchChromium() throws {
        let dir = try AnimReference.fixtures()
        for name in ["compose.png", "default-image.png", "compose.webp"] {
            try compareFrames(dir.path(name), chromium: true, what: "\(name) vs Chromium")
        }
    }

    @Test func fixtureFramesMatchPillow() throws {
        let dir = try AnimReference.fixtures()
        try compareFrames(dir.path("compose.webp"), chromium: false, what: "compose.webp vs Pillow")
        for name in ["compose.png", "default-image.png"] {
            try compareFrames(dir.path(name), chromium: false, what: "\(name) vs Pillow", meanBound: 4, maxBound: 80)
        }
        let compose = try AnimReference.ours(dir.path("compose.png"))
        #expect(compose.info.loopCount == 3 && compose.info.durationsMs == [120, 100, 80, 200, 50, 300])
    }

    /// The IDAT image of default-image.png is solid magenta and precedes every fcTL: it is not a frame.
    @Test func defaultImageIsNotPartOfTheAnimation() throws {
        let dir = try AnimReference.fixtures()
        let ours = try AnimReference.ours(dir.path("default-image.png"))
        #expect(ours.info.frameCount == 3 && ours.frames.count == 3 && ours.info.durationsMs == [100, 100, 150])
        for frame in ours.frames {
            let magenta = stride(from: 0, to: frame.pixels.count, by: 4).contains {
                frame.pixels[$0] == 255 && frame.pixels[$0 + 1] == 0 && frame.pixels[$0 + 2] == 255 && frame.pixels[$0 + 3] == 255
            }
            #expect(!magenta)
        }
        // compose.png's IDAT follows its first fcTL: the first frame.
        let source = try APNGFrameSource(source: try FileByteSource(path: dir.path("compose.png")))
        #expect(source.defaultImageIsFirstFrame)
    }

    /// The MP4 against Chromium (and Pillow), sampled at the middle of each frame's display interval.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func mp4MatchesTheReferencesAtTheSameInstants() throws {
        let dir = try TemporaryDirectory()
        let fixtures = try AnimReference.fixtures()
        let files = AnimReference.corpusAnimations.map { ($0.path, $0.url.path) }
            + ["compose.png", "default-image.png", "compose.webp"].map { ("fixture \($0)", fixtures.path($0)) }
        for (name, path) in files {
            let out = dir.path("v.mp4")
            let result = try GIFToVideo.convert(try FileByteSource(path: path), toPath: out)
            let info = try AnimReference.ours(path).info
            #expect(result.durationMs == info.durationMs && result.gifFrames == info.frameCount && result.loopCount == info.loopCount)
            // Every file, noise included (the default quality floor gives random_lossless.webp a lower crf).
            let bound = 0.95
            for chromium in AnimReference.chromiumAvailable ? [true, false] : [false] {
                let s = try AnimReference.ssim(video: out, source: path, chromium: chromium)
                #expect(s.mean >= bound && s.min >= bound - 0.01, "\(name) vs \(chromium ? "Chromium" : "Pillow"): SSIM \(s)")
            }
        }
    }

    /// Each frame's pts is the cumulative displayed duration, identical neighbours merge, the last frame
    /// keeps its full length, the loop count is tagged: checked with ffprobe.
    @Test func mp4TimingIsExact() throws {
        let fixtures = try AnimReference.fixtures()
        let dir = try TemporaryDirectory()
        for name in ["compose.png", "compose.webp"] {
            let out = dir.path("\(name).mp4")
            let result = try GIFToVideo.convert(try FileByteSource(path: fixtures.path(name)), toPath: out)
            let pillow = try #require(try AnimReference.frames(fixtures.path(name), chromium: false))
            let durations = pillow.durations.map(AnimationTiming.displayedMilliseconds)
            let starts = durations.reduce(into: [0]) { $0.append($0.last! + $1) }.dropLast()
            let p = try ConversionTests.ffprobe(out)
            let pts = p.framePTS.map { Int(($0 * 1000).rounded()) }
            // Every sample starts on a frame's start, but for those that may repeat the last picture within
            // its stay (`SampleTiming.averaged`: B-frames at a variable rate).
            let total = durations.reduce(0, +), lastStart = starts.last ?? 0
            let extra = pts.filter { !starts.contains($0) }
            #expect(pts.first == 0 && extra.allSatisfy { $0 > lastStart && $0 < total }, "\(name): \(pts) vs \(Array(starts))")
            #expect(pts.count - extra.count == result.encodedFrames && result.encodedFrames <= durations.count)
            #expect(abs(p.duration * 1000 - Double(durations.reduce(0, +))) < 1.5, "\(name): \(p.duration)")
            #expect(p.tags["loop_count"] == String(pillow.loop ?? -1), "\(name): \(p.tags)")
        }
    }

    /// Canvas, frame and duration limits throw from the headers, before any frame is decoded.
    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func limitsAreCheckedFromHeaders() throws {
        let fixtures = try AnimReference.fixtures()
        for path in [Corpus.file("webp/pillow/iss634.webp"), fixtures.path("compose.png"), fixtures.path("compose.webp")] {
            for limits in [Limits(maxCanvasPixels: 1000), Limits(maxFrames: 2), Limits(maxDurationMs: 200)] {
                do {
                    _ = try FrameSources.open(try FileByteSource(path: path), limits: limits)
                    Issue.record("\(path) was accepted under \(limits)")
                } catch let e as FlipbookError {
                    #expect(e.code == .limitExceeded, "\(path): \(e)")
                }
            }
        }
    }

    /// Cut files end with the complete frames and a warning (APNG), or a typed error; never a crash.
    @Test func truncatedFilesAreHandled() throws {
        let fixtures = try AnimReference.fixtures()
        for name in ["compose.png", "compose.webp"] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixtures.path(name))))
            for cut in stride(from: 8, to: bytes.count, by: max(1, bytes.count / 23)) {
                let source = MemoryByteSource(Array(bytes[..<cut]))
                do {
                    let frames = try FrameSources.open(source)
                    var count = 0
                    try frames.forEachFrame { _, _ in count += 1; return true }
                    #expect(count >= 1 && count <= 6)
                    if name == "compose.png" && count < 6 { #expect(!frames.warnings.isEmpty, "cut at \(cut)") }
                } catch let error as FlipbookError {
                    #expect([.corrupt, .truncated, .unsupported, .limitExceeded].contains(error.code), "cut at \(cut): \(error)")
                }
            }
        }
    }
}
