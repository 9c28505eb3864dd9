// Thumbnails of every file in a folder that Flipbook can read (stills, animations' first frames, videos'
// posters), 256 px JPEGs, written atomically; files it cannot read are reported and skipped.
import Flipbook
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let input = arguments.first, let output = arguments.last else {
    print("usage: thumbnail-folder INPUT_FOLDER OUTPUT_FOLDER")
    exit(64)
}
try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
let names = try FileManager.default.contentsOfDirectory(atPath: input).sorted()
var failed = 0
for name in names where !name.hasPrefix(".") {
    let path = (input as NSString).appendingPathComponent(name)
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
    do {
        let media = try MediaInput(path: path, limits: Limits(maxPixels: 100_000_000))
        let thumb = try media.thumbnail(maxPixelSize: 256, fit: .inside, quality: 80, format: .jpeg)
        let target = (output as NSString).appendingPathComponent((name as NSString).deletingPathExtension + ".jpg")
        try AtomicFile.write(thumb.data, to: target, protecting: [path])
        print("\(name): \(thumb.width)x\(thumb.height), \(thumb.data.count) bytes")
    } catch let error as FlipbookError {
        failed += 1
        print("\(name): \(error.code): \(error.message)")
    }
}
exit(failed == 0 ? 0 : 1)
