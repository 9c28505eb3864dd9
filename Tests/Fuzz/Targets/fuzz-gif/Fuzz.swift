@testable import Flipbook
import FuzzDriver

/// libFuzzer entry: the GIF decoder (giflib's record reader, our LZW and compositing), header then frames.
/// Limits are small so the fuzzer explores parsing rather than allocating big canvases.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let source = MemoryByteSource(copying: UnsafeRawBufferPointer(start: data, count: size))
    let options = GIFDecodeOptions(maxCanvasPixels: 1 << 20, maxFrames: 64, maxTotalPixels: 1 << 24)
    _ = try? GIFDecoder.info(source: source, options: options)
    guard let decoder = try? GIFDecoder(source: source, options: options) else { return 0 }
    while (try? decoder.nextFrame()).flatMap({ $0 }) != nil {}
    return 0
}

/// The executable's entry (SwiftPM names it `<module>_main`): libFuzzer's driver over `fuzz`.
@_cdecl("fuzz_gif_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv, fuzz)
}
