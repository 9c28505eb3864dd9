/// What every fuzz target shares: handing over to libFuzzer's own driver. SwiftPM links an executable with
/// `main` defined as `<module>_main`, so libFuzzer's `main` never links in; each target defines that
/// symbol (`@_cdecl("fuzz_x_main")`) and calls `FuzzDriver.run` with its entry point.
public enum FuzzDriver {
    public typealias Entry = @convention(c) (UnsafePointer<UInt8>, Int) -> Int32

    /// Runs libFuzzer (LLVMFuzzerRunDriver, compiler-rt >= 12) over `entry` with the process's arguments.
    public static func run(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ entry: Entry) -> Int32 {
        var count = argc, vector = argv
        return runFuzzerDriver(&count, &vector, entry)
    }
}

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                             _ callback: FuzzDriver.Entry) -> Int32
