import ArgumentParser
import Foundation
import H264

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
        if path == "-" {
            return [UInt8](FileHandle.standardInput.readDataToEndOfFile())
        }
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError("\(path): no such file")
        }
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
        do throws(H264Error) {
            return try AVCDecoderConfigurationRecord(extradata: bytes)
        } catch {
            throw CLIError(file: path, error)
        }
    }

    /// Writes bytes to a file, or standard output for `-`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        if path == "-" {
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw CLIError("\(path): cannot write: \(error.localizedDescription)")
        }
    }

    /// Prints each diagnostic once on standard error, one line each in the format of errors
    /// (`h264 COMMAND: warning: FILE: byte N: …`); with `strict`, prints them as errors and
    /// fails (exit status 1).
    static func report(_ diagnostics: [H264Error], file: String, command: String, strict: Bool) throws {
        let kind = strict ? "error" : "warning"
        for diagnostic in diagnostics {
            printLine(command: command, kind: kind, CLIError(file: file, diagnostic).description)
        }
        if strict && !diagnostics.isEmpty { throw ExitCode.failure }
    }

    /// Writes `h264 COMMAND: KIND: MESSAGE` as one line on standard error.
    static func printLine(command: String, kind: String, _ message: String) {
        let oneLine = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        FileHandle.standardError.write(Data("h264 \(command): \(kind): \(oneLine)\n".utf8))
    }

    /// Writes `h264 COMMAND: error: MESSAGE` as one line on standard error.
    static func printError(command: String, _ message: String) {
        printLine(command: command, kind: "error", message)
    }
}

/// Runs a command body, turning any failure into one line on standard error
/// (`h264 COMMAND: error: …`) and exit status 1.
func runReportingErrors(command: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch {
        CLIIO.printError(command: command, String(describing: error))
        throw ExitCode.failure
    }
}
