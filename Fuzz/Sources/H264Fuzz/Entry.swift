#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// libFuzzer entry points. The fuzzer links its own `main`; this file has none, so the target
// only links with `-sanitize=fuzzer` (Scripts/fuzz.sh).
//
// `FUZZ_TARGET` (environment) names the parser to fuzz; see `FuzzTarget`.

/// The target chosen by `FUZZ_TARGET`, read once.
nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>?,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    guard let raw = getenv("FUZZ_TARGET"), let target = FuzzTarget(rawValue: String(cString: raw)) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: " ")
        print("set FUZZ_TARGET to one of: \(names)")
        exit(2)
    }
    selected = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes: [UInt8] = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selected?.run(bytes)
    return 0
}
