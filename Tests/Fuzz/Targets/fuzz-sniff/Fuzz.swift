@testable import Flipbook
import FuzzDriver

/// libFuzzer entry: magic-byte sniffing (and the ISO-BMFF brand / APNG chunk walks it does).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let source = MemoryByteSource(copying: UnsafeRawBufferPointer(start: data, count: size))
    _ = MediaType.sniff(source)
    return 0
}

/// The executable's entry (SwiftPM names it `<module>_main`): libFuzzer's driver over `fuzz`.
@_cdecl("fuzz_sniff_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv, fuzz)
}
