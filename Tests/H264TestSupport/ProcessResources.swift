import Foundation

/// What a running process holds, from `/proc` (Linux): its open file descriptors and its
/// resident memory — what the fault tests watch for leaks.
public enum ProcessResources {
    /// How many file descriptors process `pid` has open (0 when unknown).
    public static func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// `VmRSS` of process `pid`, in KiB (0 when unknown).
    public static func residentKiB(_ pid: Int32) -> Int { status("VmRSS", of: pid) }

    /// `RssAnon` of process `pid` (its resident heap and stacks, without mapped files), in KiB.
    public static func anonymousKiB(_ pid: Int32) -> Int { status("RssAnon", of: pid) }

    /// True under AddressSanitizer or ThreadSanitizer (CI's second and third runs; the `h264`
    /// processes the tests start are built alike): ASan's quarantine keeps freed memory resident,
    /// TSan's shadow memory and history grow with every access (5.9 MB over 20 reconnections in
    /// CI), so memory bounds are the plain runs' to check.
    public static var underSanitizer: Bool {
        ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil
            || dlsym(nil, "__tsan_init") != nil || dlsym(nil, "__asan_init") != nil
    }

    /// The value in KiB of the `key:` line of `/proc/PID/status`.
    private static func status(_ key: String, of pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(key + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
