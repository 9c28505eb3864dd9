@testable import Flipbook
import FuzzDriver

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

/// The executable's entry (SwiftPM names it `<module>_main`): libFuzzer's driver over `fuzz`.
@_cdecl("fuzz_png_webp_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv, fuzz)
}
