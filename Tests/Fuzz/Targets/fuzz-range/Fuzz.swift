import FlipbookServer
import FuzzDriver

/// libFuzzer entry: the server's Range header parser and evaluator (FlipbookServer.ByteRanges). The first
/// two bytes pick the representation size (0-65535); the rest is the header. Besides not crashing, every
/// range it answers with must lie inside the representation: a violation traps, so the fuzzer reports it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 2 else { return 0 }
    let length = Int(data[0]) << 8 | Int(data[1])
    let header = String(decoding: UnsafeBufferPointer(start: data + 2, count: size - 2), as: UTF8.self)
    _ = ByteRanges.parse(header)
    func inside(_ r: ClosedRange<Int>) -> Bool { r.lowerBound >= 0 && r.upperBound < length }
    switch ByteRanges.evaluate(header, size: length) {
    case .partial(let r): precondition(inside(r), "range \(r) outside \(length) bytes")
    case .multiple(let rs): precondition(rs.allSatisfy(inside), "ranges \(rs) outside \(length) bytes")
    case .full, .unsatisfiable: break
    }
    return 0
}

/// The executable's entry (SwiftPM names it `<module>_main`): libFuzzer's driver over `fuzz`.
@_cdecl("fuzz_range_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv, fuzz)
}
