import ArgumentParser
import Foundation
import H264
import H264Media
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The input of `h264 encode` and `h264 serve`: a y4m file, `-` for y4m on standard input, or
/// raw I420 with `--size` and `--fps`.
struct InputOptions: ParsableArguments {
    @Argument(help: "Input: a .y4m file, - for y4m on standard input, or raw I420 with --size and --fps.")
    var input: String
    @Option(help: "Raw I420 input: frame size WxH.")
    var size: String?
    @Option(help: "Raw I420 input: frames per second (e.g. 30 or 30000/1001).")
    var fps: String?

    /// True when the input is standard input (it cannot be read twice).
    var isStandardInput: Bool { input == "-" }

    /// Opens the input: a frame reader and, for a file, how many frames it holds.
    func open() throws -> (FrameReader<FileSource>, totalFrames: Int?) {
        let handle: FileHandle
        var fileSize: Int?
        if input == "-" {
            handle = .standardInput
        } else {
            guard FileManager.default.fileExists(atPath: input) else { throw CLIError("no such file: \(input)") }
            guard let h = FileHandle(forReadingAtPath: input) else { throw CLIError("cannot read \(input)") }
            handle = h
            fileSize = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? nil
        }
        let source = FileSource(handle: handle, name: input == "-" ? "standard input" : input)
        if let size {
            let (width, height) = try CLIError.input { () throws(H264Error) in try SizeAndRate.size(size) }
            let rate = try CLIError.input { () throws(H264Error) in
                try SizeAndRate.rate(Substring(fps ?? "30"), separator: "/", decimal: true, field: "--fps", "--fps ")
            }
            let reader = FrameReader(rawI420: source, width: width, height: height, frameRate: rate)
            return (reader, fileSize.map { $0 / (width * height * 3 / 2) })
        }
        guard fps == nil else { throw CLIError("--fps is for raw I420 input (with --size); y4m carries its rate") }
        let reader = try FrameReader(y4m: source)
        let total = fileSize.map { $0 / (reader.header.frameBytes + 6) }
        return (reader, total)
    }
}

/// Reads a file descriptor with `read(2)`, straight into the caller's buffer.
struct FileSource: ByteSource {
    let handle: FileHandle
    /// Where the bytes come from, for error messages.
    var name = "input"

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let count = readDescriptor(handle.fileDescriptor, base, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw CLIError("reading \(name): \(String(cString: strerror(errno)))")
        }
    }
}

/// `read(2)` (a free function, so that `FileSource.read(into:)` can call it by name).
private func readDescriptor(_ descriptor: Int32, _ base: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, base, count)
}
