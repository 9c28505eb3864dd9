@testable import Flipbook

/// libFuzzer entry: magic-byte sniffing (and the ISO-BMFF brand / APNG chunk walks it does).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let source = MemoryByteSource(copying: UnsafeRawBufferPointer(start: data, count: size))
    _ = MediaType.sniff(source)
    return 0
}

/// SwiftPM links executables with `main` defined as `<module>_main`, so libFuzzer's own `main` never
/// links in; this one hands over to libFuzzer's driver (LLVMFuzzerRunDriver, compiler-rt >= 12).
@_cdecl("fuzz_sniff_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc, vector = argv
    return runFuzzerDriver(&count, &vector, fuzz)
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> Int32) -> Int32
