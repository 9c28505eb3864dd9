@testable import Flipbook
import FuzzDriver

/// libFuzzer entry: libav's demuxers reading through our AVIO bridge (MP4/MOV/Matroska/WebM probe), as
/// `flipbook probe` does for videos, whatever the bytes sniff as.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let source = MemoryByteSource(copying: UnsafeRawBufferPointer(start: data, count: size))
    let input = MediaInput(source: source, limits: Limits(maxPixels: 1 << 22))
    _ = try? VideoPipeline().probe(input)
    return 0
}

/// The executable's entry (SwiftPM names it `<module>_main`): libFuzzer's driver over `fuzz`.
@_cdecl("fuzz_probe_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv, fuzz)
}
