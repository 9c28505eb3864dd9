@testable import Flipbook
import FuzzDriver

/// libFuzzer entry: the animated WebP and APNG frame sources (libwebp's demuxer and animation decoder; our
/// APNG chunk walk, fcTL checks, per-frame PNG decode, blending and disposal), header then every frame.
/// GIF has its own target. Limits are small so the fuzzer explores parsing rather than big canvases.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let source = MemoryByteSource(copying: UnsafeRawBufferPointer(start: data, count: size))
    let type = MediaType.sniff(source)
    guard type == .animatedWebP || type == .apng else { return 0 }
    let limits = Limits(maxPixels: 1 << 20, maxCanvasPixels: 1 << 20, maxFrames: 64, maxTotalPixels: 1 << 24)
    guard let frames = try? FrameSources.open(source, limits: limits) else { return 0 }
    _ = try? frames.forEachFrame { _, _ in true }
    return 0
}

/// The executable's entry (SwiftPM names it `<module>_main`): libFuzzer's driver over `fuzz`.
@_cdecl("fuzz_frames_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv, fuzz)
}
