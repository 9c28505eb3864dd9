import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// Animated WebP and APNG through the `flipbook` commands a GIF goes through: probe, frames, thumb --frame,
/// convert (folders, --keep-smaller) and preview. Inputs: Pillow-made fixtures (make_anim_fixtures.py) and
/// the project's samples; references: Pillow and ffprobe.
@Suite(.serialized, .offPool) struct AnimationCLITests {
    static let built = CLITests.built
    func flipbook(_ args: String...) throws -> Run.Result { try Run.program(CLITests.binary, args) }

    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func probeReportsFramesDurationLoopsAndAlpha() throws {
        let fx = try AnimReference.fixtures()
        let result = try flipbook("probe", "--json", fx.path("compose.png"), fx.path("compose.webp"), fx.path("default-image.png"))
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try result.stdout.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        try #require(objects.count == 3)
        for (object, name) in zip(objects, ["compose.png", "compose.webp", "default-image.png"]) {
            let pillow = try #require(try AnimReference.frames(fx.path(name), chromium: false))
            #expect(object["frames"] as? Int == pillow.frames.count, "\(name)")
            #expect(object["durationMs"] as? Int == pillow.durations.map(AnimationTiming.displayedMilliseconds).reduce(0, +), "\(name)")
            #expect(object["loopCount"] as? Int == pillow.loop, "\(name)")
            #expect(object["hasAlpha"] as? Bool == true && object["width"] as? Int == 64 && object["height"] as? Int == 48, "\(name)")
        }
        #expect(objects[0]["type"] as? String == "apng" && objects[1]["type"] as? String == "webp-animated")
    }

    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func framesAndThumbFrameMatchPillow() throws {
        let fx = try AnimReference.fixtures()
        let dir = try TemporaryDirectory()
        for name in ["compose.png", "compose.webp"] {
            let pillow = try #require(try AnimReference.frames(fx.path(name), chromium: false))
            let out = dir.path("frames-\(name)")
            let result = try flipbook("frames", fx.path(name), "-o", out)
            #expect(result.status == 0 && result.stderr.contains("6 frame(s) written"), "\(result.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
            #expect(files.count == 6)
            // --at picks the frame on screen then (compose: 120 ms, then frame 1 for 100 ms (0 ms stored)).
            let at = try flipbook("frames", fx.path(name), "-o", dir.path("at-\(name)"), "--at", "150ms")
            let atFiles = try FileManager.default.contentsOfDirectory(atPath: dir.path("at-\(name)"))
            #expect(at.status == 0 && atFiles == ["frame-00001.png"], "\(atFiles)")
            // thumb --frame 3 at the canvas size: the composited frame, against Pillow's.
            let thumb = dir.path("t-\(name).png")
            let t = try flipbook("thumb", fx.path(name), "-o", thumb, "--frame", "3", "--size", "64")
            #expect(t.status == 0, "\(t.stderr)")
            let decoded = try #require(try Pillow.decode(thumb))
            let d = AnimReference.difference(decoded, pillow.frames[3])
            #expect(d.mean < 0.5 && d.max <= 3, "\(name) thumb frame 3: \(d)")
        }
    }

    /// Folders pick up GIF, animated WebP and APNG but not still WebP and PNG; --keep-smaller keeps the
    /// original under its own extension.
    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func convertFoldersTakeAnimationsOnly() throws {
        let fx = try AnimReference.fixtures()
        let dir = try TemporaryDirectory()
        let input = dir.path("in")
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for name in ["compose.png", "compose.webp"] { try FileManager.default.copyItem(atPath: fx.path(name), toPath: "\(input)/\(name == "compose.png" ? "a" : "b").\(name.split(separator: ".")[1])") }
        try FileManager.default.copyItem(atPath: "\(CLITests.samples)/alpha-640x480.png", toPath: "\(input)/still.png")
        try FileManager.default.copyItem(atPath: "\(CLITests.samples)/cellauto-400x300.webp", toPath: "\(input)/still.webp")
        try FileManager.default.copyItem(atPath: "\(CLITests.samples)/testsrc-160x120-2s.gif", toPath: "\(input)/c.gif")
        let result = try flipbook("convert", input, "-o", dir.path("out"), "--report", dir.path("r.jsonl"))
        #expect(result.status == 0, "\(result.stderr)")
        let outputs = try FileManager.default.contentsOfDirectory(atPath: dir.path("out")).sorted()
        #expect(outputs == ["a.mp4", "b.mp4", "c.mp4"], "\(outputs)")
        #expect(result.stderr.contains("still.png: not a GIF, animated WebP or APNG, skipped") && result.stderr.contains("still.webp"))
        for (name, fixture) in [("a", "compose.png"), ("b", "compose.webp")] {
            let p = try ConversionTests.ffprobe(dir.path("out/\(name).mp4"))
            let pillow = try #require(try AnimReference.frames(fx.path(fixture), chromium: false))
            #expect(abs(p.duration * 1000 - Double(pillow.durations.map(AnimationTiming.displayedMilliseconds).reduce(0, +))) < 1.5)
            #expect(p.tags["loop_count"] == String(pillow.loop ?? -1))
        }
        // The fixtures are about 1.2-1.6 KB: their MP4s are larger, so --keep-smaller keeps them as they are.
        let kept = try flipbook("convert", input, "-o", dir.path("kept"), "--keep-smaller", "--report", dir.path("k.jsonl"))
        #expect(kept.status == 0, "\(kept.stderr)")
        let keptFiles = try FileManager.default.contentsOfDirectory(atPath: dir.path("kept"))
        #expect(keptFiles.contains("a.png") && keptFiles.contains("b.webp"), "\(keptFiles)")
        let keptBytes = try Data(contentsOf: URL(fileURLWithPath: dir.path("kept/a.png")))
        #expect(keptBytes == (try Data(contentsOf: URL(fileURLWithPath: fx.path("compose.png")))))
        #expect(try String(contentsOfFile: dir.path("k.jsonl"), encoding: .utf8).contains("kept-original"))
    }

    @Test(.enabled(if: built, "build the flipbook executable first (make test does)"))
    func previewOfAnAnimation() throws {
        let fx = try AnimReference.fixtures()
        let dir = try TemporaryDirectory()
        for name in ["compose.png", "compose.webp"] {
            // 850 / 790 ms long: two segments of 300 ms.
            let out = dir.path("\(name).mp4")
            let result = try flipbook("preview", fx.path(name), "-o", out, "--segments", "2", "--segment-length", "300ms", "--size", "32")
            #expect(result.status == 0, "\(result.stderr)")
            let p = try ConversionTests.ffprobe(out)
            #expect(p.width == 32 && p.height == 24 && abs(p.duration - 0.6) < 0.002, "\(name): \(p)")
            #expect(p.framePTS.first == 0 && p.framePTS.count >= 2, "\(name): \(p.framePTS)")
        }
    }
}
