public import Foundation
import H264

/// Runs programs (the `h264` executable, FFmpeg, x264) from tests.
public enum Subprocess {
    /// What a program printed and how it ended.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: [UInt8]
        public var stderr: String
    }

    /// A write to a program that exited must fail, not kill the test process.
    private static let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Runs `executable` (an absolute path, or a name looked up on PATH) with `arguments`,
    /// feeding `stdin` if given, and waits for it to exit. Standard output and error are read
    /// concurrently, so a full pipe never blocks the program.
    public static func run(_ executable: String, _ arguments: [String], stdin: [UInt8]? = nil) throws -> Output {
        let process = try prepare(executable, arguments)
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        TestProcesses.register(process)
        let group = DispatchGroup()
        let errData = Locked(Data())
        DispatchQueue.global().async(group: group) {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            errData.withLock { $0 = data }
        }
        if let stdin {
            let handle = input.fileHandleForWriting
            DispatchQueue.global().async(group: group) {
                try? handle.write(contentsOf: Data(stdin))
                try? handle.close()
            }
        }
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        group.wait()
        return Output(status: process.terminationStatus, stdout: [UInt8](stdoutData),
                      stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self))
    }

    /// Starts `executable` (an absolute path, or a name looked up on PATH) with `arguments` and
    /// returns without waiting: standard input `/dev/null`, standard output and error where given
    /// (`/dev/null` otherwise), `environment` added to this process's.
    public static func launch(_ executable: String, _ arguments: [String], standardOutput: FileHandle? = nil,
                              standardError: FileHandle? = nil, environment: [String: String] = [:]) throws -> Process {
        let process = try prepare(executable, arguments)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = standardOutput ?? FileHandle.nullDevice
        process.standardError = standardError ?? FileHandle.nullDevice
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        try process.run()
        TestProcesses.register(process)
        return process
    }

    /// The one start of every test process: checks the command line, keeps descriptors 0–2 open
    /// (``StandardDescriptors``) before any pipe is made, and names the program.
    private static func prepare(_ executable: String, _ arguments: [String]) throws -> Process {
        _ = ignoreSIGPIPE
        try checkKeyboard(executable, arguments)
        StandardDescriptors.ensureOpen()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        return process
    }

    /// A program started the wrong way for a test.
    public struct LaunchError: Error, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// FFmpeg reads interactive commands from standard input unless told `-nostdin` (`d` cycles
    /// its debug flags, `+` raises its log level): every `ffmpeg` a test starts must say
    /// `-nostdin`, also behind `timeout`, `env` or `nice`. (`ffprobe` has no keyboard.)
    ///
    /// - Throws: ``LaunchError`` for an `ffmpeg` command line without `-nostdin`.
    public static func checkKeyboard(_ executable: String, _ arguments: [String]) throws {
        var command = [executable] + arguments
        while let first = command.first {
            let name = first.split(separator: "/").last.map(String.init) ?? first
            if name == "timeout" || name == "nice" {
                command.removeFirst()
                while let option = command.first, option.hasPrefix("-") || Double(option) != nil { command.removeFirst() }
            } else if name == "env" {
                command.removeFirst()
            } else {
                if name == "ffmpeg" && !command.contains("-nostdin") {
                    throw LaunchError(description: "ffmpeg started without -nostdin (it would read keys from its standard input): \(command)")
                }
                return
            }
        }
    }
}
