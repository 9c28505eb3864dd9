@testable import Flipbook
import FuzzDriver

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

/// The executable's entry (SwiftPM names it `<module>_main`): libFuzzer's driver over `fuzz`.
@_cdecl("fuzz_jpeg_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv, fuzz)
}
