import FlipbookServer

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

/// SwiftPM links executables with `main` defined as `<module>_main`, so libFuzzer's own `main` never
/// links in; this one hands over to libFuzzer's driver (LLVMFuzzerRunDriver, compiler-rt >= 12).
@_cdecl("fuzz_path_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc, vector = argv
    return runFuzzerDriver(&count, &vector, fuzz)
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32
