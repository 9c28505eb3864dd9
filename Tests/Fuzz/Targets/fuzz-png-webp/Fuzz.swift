@testable import Flipbook

/// libFuzzer entry: the PNG (IHDR, acTL, chunk walk) and WebP (VP8, VP8L, VP8X, ANIM) header readers.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let source = MemoryByteSource(copying: UnsafeRawBufferPointer(start: data, count: size))
    _ = try? StillHeader.png(source)
    _ = try? StillHeader.webp(source)
    // PNGs are decoded too: the 8-bit fast path inflates IDAT with ISA-L on a thread of its own and
    // unfilters in Swift, all of it reading bytes an attacker chose.
    if size >= 8, data[0] == 0x89, data[1] == 0x50,
       let input = try? MediaInput(bytes: Array(UnsafeRawBufferPointer(start: data, count: size)), limits: Limits(maxPixels: 1 << 22)) {
        _ = try? input.thumbnailImage(ThumbnailRequest(maxPixelSize: 32))
    }
    return 0
}

/// SwiftPM links executables with `main` defined as `<module>_main`, so libFuzzer's own `main` never
/// links in; this one hands over to libFuzzer's driver (LLVMFuzzerRunDriver, compiler-rt >= 12).
@_cdecl("fuzz_png_webp_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc, vector = argv
    return runFuzzerDriver(&count, &vector, fuzz)
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32
