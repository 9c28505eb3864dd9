import Foundation
import FlipbookTestSupport
import Testing
@testable import Flipbook

/// `probe` of every corpus video against ffprobe. ffprobe decodes ahead (`avformat_find_stream_info`) where our
/// probe reads the headers and decodes only when they leave something out, so this is what keeps the shortcut
/// honest: the same codec, size after rotation, duration, frame count and alpha for every file.
@Suite(.offPool) struct VideoProbeCorpusTests {
    /// What ffprobe says of a file's first video stream (not cover art) and of its container.
    struct Stated {
        var codec: String?
        var width = 0, height = 0
        var pixelFormat: String?
        var frames: Int?
        var rotation = 0
        var alphaMode = false
        var durationMs: Int?
    }

    static func ffprobe(_ path: String) throws -> Stated {
        let entries = "stream=codec_name,width,height,pix_fmt,nb_frames:stream_side_data=rotation:stream_tags=alpha_mode:format=duration"
        let out = try Run.program("/usr/bin/ffprobe", ["-v", "quiet", "-select_streams", "V", "-show_entries", entries,
                                                       "-of", "json", path]).stdout
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], "\(path): \(out)")
        var stated = Stated()
        if let seconds = ((json["format"] as? [String: Any])?["duration"] as? String).flatMap(Double.init) {
            stated.durationMs = Int(seconds * 1000)  // ffprobe prints microseconds; ours is truncated to milliseconds
        }
        guard let stream = (json["streams"] as? [[String: Any]])?.first else { return stated }
        stated.codec = stream["codec_name"] as? String
        stated.width = stream["width"] as? Int ?? 0
        stated.height = stream["height"] as? Int ?? 0
        stated.pixelFormat = (stream["pix_fmt"] as? String).flatMap { $0 == "unknown" ? nil : $0 }
        stated.frames = (stream["nb_frames"] as? String).flatMap(Int.init)
        stated.rotation = ((stream["side_data_list"] as? [[String: Any]])?.compactMap { $0["rotation"] as? Int }.first) ?? 0
        stated.alphaMode = (stream["tags"] as? [String: Any])?["alpha_mode"] as? String == "1"
        return stated
    }

    /// libav's pixel formats with an alpha plane or component, by name.
    static func hasAlpha(_ pixelFormat: String) -> Bool {
        ["yuva", "rgba", "bgra", "argb", "abgr", "gbrap", "ya8", "ya16", "rgb32", "bgr32"].contains { pixelFormat.hasPrefix($0) }
    }

    @Test(.enabled(if: Corpus.available, Corpus.skipMessage))
    func probeAgreesWithFFprobe() throws {
        var checked = 0, alphaChecked = 0
        for entry in Corpus.entries where entry.folder == "video" {
            let stated = try Self.ffprobe(entry.url.path)
            let info = try MediaInput(path: entry.url.path).probe()
            #expect(info.durationMs.map { abs($0 - (stated.durationMs ?? -10)) <= 1 } ?? (stated.durationMs == nil),
                    "\(entry.path): duration \(String(describing: info.durationMs)) ms, ffprobe \(String(describing: stated.durationMs))")
            guard let codec = stated.codec else {
                #expect(info.width == nil && info.codec == nil, "\(entry.path): ffprobe finds no video stream")
                continue
            }
            // An all-zero display matrix is a rotation of NaN to ffprobe (printed as Int64.min): no turn.
            let turned = [90, -90, 270, -270].contains(stated.rotation)
            #expect(info.codec == codec, "\(entry.path)")
            #expect(info.width == (turned ? stated.height : stated.width) && info.height == (turned ? stated.width : stated.height),
                    "\(entry.path): \(String(describing: info.width))x\(String(describing: info.height)), ffprobe \(stated.width)x\(stated.height) turned \(stated.rotation)")
            #expect(info.frames == stated.frames, "\(entry.path)")
            // WebM's AlphaMode: the alpha travels beside the VP8/VP9 stream, which ffprobe's decoder ignores
            // (yuv420p); a browser shows it.
            if stated.alphaMode {
                #expect(info.hasAlpha == true, "\(entry.path): WebM AlphaMode 1")
                alphaChecked += 1
            } else if let format = stated.pixelFormat {
                #expect(info.hasAlpha == Self.hasAlpha(format), "\(entry.path): \(format)")
            }
            checked += 1
        }
        #expect(checked >= 14)
        #expect(alphaChecked >= 1)
    }
}
