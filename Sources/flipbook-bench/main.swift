// flipbook-bench: in-process measurements for `make bench` (bench/compare.py drives it). Not installed.
//
//   flipbook-bench gif-decode FILE              decode every frame with Flipbook's GIF decoder (reading the
//                                               file by offset), then exit
//   flipbook-bench gif-throughput RUNS FILE...  Flipbook vs libavcodec's GIF decoder, alternating, in this
//                                               process; prints megapixels composited per second
//   flipbook-bench poster VIDEO OUT.jpg         one poster (256 px, defaults), as `flipbook poster` makes it
//   flipbook-bench thumb IMAGE OUT.jpg          one 256 px JPEG thumbnail, as `flipbook thumb` makes it
//   flipbook-bench convert GIF OUT.mp4          one GIF to MP4 with the default options, as `flipbook convert`
// The last three do one job per process, so bench/shape.sh can time them and read their peak RSS.
#if canImport(Glibc)
import Glibc
#endif
import Flipbook
LibAVLog.silenceProcessWide()  // an executable may choose libav's process-wide log level; the library never does

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

func decodeOurs(_ source: any ByteSource) throws -> (frames: Int, pixels: Int) {
    let decoder = try GIFDecoder(source: source)
    var frames = 0, pixels = 0
    // Zero-copy visit, as libavcodec's frames are looked at and released in place.
    try decoder.forEachFrame { _, canvas in
        frames += 1
        pixels += canvas.count / 4
    }
    return (frames, pixels)
}

func load(_ path: String) throws -> MemoryByteSource {
    let file = try FileByteSource(path: path)
    return try file.withContiguousBytes { MemoryByteSource(copying: $0) }
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

let args = CommandLine.arguments
do {
    switch args.count > 1 ? args[1] : "" {
    case "gif-decode" where args.count == 3:
        // Streamed from the file by offset, as the CLI reads it: nothing is loaded whole.
        let r = try decodeOurs(try FileByteSource(path: args[2]))
        print("\(r.frames) frames, \(r.pixels) pixels")
    case "gif-throughput" where args.count >= 4:
        let runs = Int(args[2]) ?? 5
        var oursTotal = 0.0, avTotal = 0.0, pixelsTotal = 0
        print("| GIF | frames | MP composited | flipbook MP/s | libavcodec MP/s | ratio |")
        print("|---|---|---|---|---|---|")
        for path in args[3...] {
            let source = try load(path)
            var ours: [Double] = [], av: [Double] = []
            var counts = (0, 0), avCounts = (0, 0)
            for i in 0..<(runs + 1) {
                // Alternate which goes first; the first round is a warm-up.
                for which in (i % 2 == 0 ? [0, 1] : [1, 0]) {
                    let start = now()
                    if which == 0 { counts = try decodeOurs(source) } else { avCounts = try ReferenceDecoders.libavcodecGIF(source: source) }
                    if i > 0 { (which == 0 ? { ours.append(now() - start) } : { av.append(now() - start) })() }
                }
            }
            let mp = Double(counts.1) / 1e6
            let o = median(ours), a = median(av)
            oursTotal += o
            avTotal += a
            pixelsTotal += counts.1
            let name = path.split(separator: "/").suffix(2).joined(separator: "/")
            let note = counts.0 == avCounts.0 ? "" : " (libavcodec: \(avCounts.0) frames)"
            print("| \(name) | \(counts.0)\(note) | \(fmt(mp)) | \(fmt(mp / o)) | \(fmt(Double(avCounts.1) / 1e6 / a)) | \(fmt((mp / o) / (Double(avCounts.1) / 1e6 / a)))x |")
        }
        let mp = Double(pixelsTotal) / 1e6
        print("| **all** | | \(fmt(mp)) | \(fmt(mp / oursTotal)) | \(fmt(mp / avTotal)) | \(fmt(avTotal / oursTotal))x |")
    case "poster" where args.count == 4:
        let media = try MediaInput(path: args[2])
        let image = try media.thumbnailImage(ThumbnailRequest(maxPixelSize: 256))
        try AtomicFile.write(try EncodedImage(image: image, format: .jpeg, quality: 80).data, to: args[3], protecting: [args[2]])
    case "thumb" where args.count == 4:
        let media = try MediaInput(path: args[2])
        try AtomicFile.write(try media.thumbnail(ThumbnailRequest(maxPixelSize: 256)).data, to: args[3], protecting: [args[2]])
    case "convert" where args.count == 4:
        try GIFToVideo.convert(try FileByteSource(path: args[2]), toPath: args[3])
    default:
        print("usage: flipbook-bench gif-decode FILE | gif-throughput RUNS FILE... | poster|thumb|convert IN OUT")
        exit(2)
    }
} catch {
    print("flipbook-bench: \(error)")
    exit(1)
}

func fmt(_ v: Double) -> String {
    let scaled = (v * 100).rounded() / 100
    return String(scaled)
}
