import ArgumentParser
import Foundation
import H264
import MediaContainers
#if canImport(Glibc)
import Glibc
#endif

enum CLIIO {
    /// Opens an output file, created or truncated, or standard output for `-`: the one place
    /// every command that writes a stream opens it.
    static func openOutput(_ path: String) throws(CLIError) -> FileHandle {
        if path == "-" { return .standardOutput }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CLIError("\(path): cannot create")
        }
        return handle
    }

    /// Reads a whole file, or standard input for `-`.
    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" { return [UInt8](FileHandle.standardInput.readDataToEndOfFile()) }
        guard FileManager.default.fileExists(atPath: path) else { throw CLIError("\(path): no such file") }
        do {
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe))
        } catch {
            throw CLIError("\(path): cannot read: \(error.localizedDescription)")
        }
    }

    /// Reads an avcC file (or Annex-B parameter sets, as FFmpeg accepts extradata); errors name
    /// the file.
    static func readConfiguration(_ path: String) throws -> AVCDecoderConfigurationRecord {
        let bytes = try read(path)
        return try CLIError.named(path) { () throws(MediaError) in try AVCDecoderConfigurationRecord(extradata: bytes) }
    }

    /// Writes bytes to a file, or standard output for `-`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        if path == "-" { return FileHandle.standardOutput.write(Data(bytes)) }
        do { try Data(bytes).write(to: URL(fileURLWithPath: path)) } catch {
            throw CLIError("\(path): cannot write: \(error.localizedDescription)")
        }
    }

    /// Prints each diagnostic once on standard error, one line each in the format of errors
    /// (`h264 COMMAND: warning: FILE: byte N: …`); with `strict`, prints them as errors and
    /// fails (exit status 1).
    static func report(_ diagnostics: [MediaError], file: String, command: String, strict: Bool) throws {
        for diagnostic in diagnostics {
            printLine(command: command, kind: strict ? "error" : "warning", CLIError(file: file, diagnostic).description)
        }
        if strict && !diagnostics.isEmpty { throw ExitCode.failure }
    }

    /// Writes `h264 COMMAND: KIND: MESSAGE` as one line on standard error.
    static func printLine(command: String, kind: String, _ message: String) {
        let oneLine = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        FileHandle.standardError.write(Data("h264 \(command): \(kind): \(oneLine)\n".utf8))
    }

    /// Writes `h264 COMMAND: error: MESSAGE` as one line on standard error.
    static func printError(command: String, _ message: String) { printLine(command: command, kind: "error", message) }
}

/// Runs a command body, turning any failure into one line on standard error
/// (`h264 COMMAND: error: …`) and exit status 1.
func runReportingErrors(command: String, _ body: () throws -> Void) throws {
    do { try body() } catch { try reportAndFail(error, command: command) }
}

/// ``runReportingErrors(command:_:)`` for the asynchronous commands (`serve`, `receive`).
func runReportingErrors(command: String, _ body: () async throws -> Void) async throws {
    do { try await body() } catch { try reportAndFail(error, command: command) }
}

/// Prints `error` as `h264 COMMAND: error: …` and fails with exit status 1 (an `ExitCode` passes through).
private func reportAndFail(_ error: any Error, command: String) throws -> Never {
    if let exit = error as? ExitCode { throw exit }
    CLIIO.printError(command: command, String(describing: error))
    throw ExitCode.failure
}

/// Writes all of `bytes` to a file descriptor (`write(2)`, retried after short writes).
func writeAll(_ descriptor: Int32, _ bytes: [UInt8], name: String) throws {
    try bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw CLIError("writing \(name == "-" ? "standard output" : name): \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }
}

/// Reads a file descriptor with `read(2)`, straight into the caller's buffer, on the caller's
/// thread (commands that read in a loop run on their own thread, never on the cooperative pool).
struct FileSource: ByteSource {
    let handle: FileHandle
    /// Where the bytes come from, for error messages.
    var name = "input"

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let count = Glibc.read(handle.fileDescriptor, base, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw CLIError("reading \(name): \(String(cString: strerror(errno)))")
        }
    }
}

extension FileSource {
    /// The input of `decode` and `transcode`: an MP4 or QuickTime file (its first bytes say so)
    /// read as the Annex-B of its video track (MediaContainers' `MP4AnnexBSource`, a frame at a
    /// time), anything else as it is ('-': standard input).
    static func annexB(path: String, name: String) throws -> any ByteSource {
        if path != "-", let handle = FileHandle(forReadingAtPath: path) {
            let head = [UInt8]((try? handle.read(upToCount: 8)) ?? Data())
            try? handle.close()
            if MP4Reader.isMP4(head) {
                return try CLIError.named(name) { () throws(MediaError) in try MP4AnnexBSource(source: try MP4FileSource(path: path)) }
            }
        }
        return try FileSource(path: path, name: name, missing: "\(path): no such file")
    }


    /// Opens `path` ('-': standard input), named `name` in errors; `missing` is the error for
    /// a file that cannot be opened.
    init(path: String, name: String, missing: String) throws {
        guard let handle = path == "-" ? .standardInput : FileHandle(forReadingAtPath: path) else { throw CLIError(missing) }
        self.init(handle: handle, name: name)
    }
}

/// Runs `body`, then `close`, also when `body` throws (what `defer` cannot do with `await`).
func closing(_ close: () async -> Void, _ body: () async throws -> Void) async throws {
    do { try await body() } catch { await close(); throw error }
    await close()
}
