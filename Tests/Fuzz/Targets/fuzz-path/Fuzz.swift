import FlipbookServer
import FuzzDriver

/// libFuzzer entry: the server's request-target parser and path normaliser (FlipbookServer.RequestTarget)
/// and its parameter readers. Besides not crashing, an accepted target must have no segment that could
/// leave the served root (empty, ".", "..", or containing '/' or NUL after decoding): a violation traps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let target = try? RequestTarget(text) else { return 0 }
    for segment in target.segments {
        precondition(!segment.isEmpty && segment != "." && segment != ".." && !segment.contains("/") && !segment.contains("\0"),
                     "accepted a segment that escapes: \(segment.debugDescription)")
    }
    _ = try? target.parameter("size")
    _ = try? target.size(default: 256)
    _ = try? target.thumbnailRequest(defaultSize: 256)
    return 0
}

/// The executable's entry (SwiftPM names it `<module>_main`): libFuzzer's driver over `fuzz`.
@_cdecl("fuzz_path_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv, fuzz)
}
