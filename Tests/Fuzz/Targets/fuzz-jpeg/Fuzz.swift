@testable import Flipbook

/// libFuzzer entry: JPEG markers (SOF, APP1), the EXIF/TIFF walk, and the still pipeline's probe and a
/// small thumbnail (TurboJPEG) under a small pixel limit. Inputs not starting as a JPEG are read as TIFF.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    _ = try? StillHeader.jpeg(bytes)
    _ = EXIFInfo(tiff: bytes)
    if size >= 2, data[0] == 0xFF, data[1] == 0xD8,
       let input = try? MediaInput(bytes: Array(bytes), limits: Limits(maxPixels: 1 << 22)) {
        _ = try? input.probe()
        _ = try? input.thumbnailImage(ThumbnailRequest(maxPixelSize: 32))
    }
    return 0
}

/// SwiftPM links executables with `main` defined as `<module>_main`, so libFuzzer's own `main` never
/// links in; this one hands over to libFuzzer's driver (LLVMFuzzerRunDriver, compiler-rt >= 12).
@_cdecl("fuzz_jpeg_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc, vector = argv
    return runFuzzerDriver(&count, &vector, fuzz)
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32
