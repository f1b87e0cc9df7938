import ArgumentParser
import Foundation
import H264
import MediaContainers

/// The input of `h264 encode` and `h264 serve`: a y4m file, `-` for y4m on standard input, or
/// raw I420 with `--size` and `--fps`.
struct InputOptions: ParsableArguments {
    @Argument(help: "Input: a .y4m file, - for y4m on standard input, or raw I420 with --size and --fps.") var input: String
    @Option(help: "Raw I420 input: frame size WxH.") var size: String?
    @Option(help: "Raw I420 input: frames per second (e.g. 30 or 30000/1001).") var fps: String?

    /// True when the input is standard input (it cannot be read twice).
    var isStandardInput: Bool { input == "-" }

    /// Opens the input: a frame reader and, for a file, how many frames it holds. Its y4m
    /// errors are `CLIError.input` (``CLIError/reading(_:)``).
    func open() throws -> (Y4MFrameReader<FileSource>, totalFrames: Int?) {
        var fileSize: Int?
        if input != "-" {
            guard FileManager.default.fileExists(atPath: input) else { throw CLIError("no such file: \(input)") }
            fileSize = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? nil
        }
        let source = try FileSource(path: input, name: input == "-" ? "standard input" : input, missing: "cannot read \(input)")
        if let size {
            let (width, height) = try CLIError.input { () throws(MediaError) in try SizeAndRate.size(size) }
            let rate = try CLIError.input { () throws(MediaError) in
                try SizeAndRate.rate(Substring(fps ?? "30"), separator: "/", decimal: true, field: "--fps", "--fps ")
            }
            let reader = Y4MFrameReader(rawI420: source, width: width, height: height, frameRate: rate)
            return (reader, fileSize.map { $0 / (width * height * 3 / 2) })
        }
        guard fps == nil else { throw CLIError("--fps is for raw I420 input (with --size); y4m carries its rate") }
        let reader = try CLIError.reading { try Y4MFrameReader(y4m: source) }
        return (reader, fileSize.map { $0 / (reader.header.frameBytes + 6) })
    }
}

/// `-o FILE`, required: the output of `encode`, `transcode` and `convert`.
struct OutputOption: ParsableArguments {
    @Option(name: .shortAndLong, help: "Output file (- for standard output).") var output: String
}

/// `--quiet` of `encode`, `decode` and `transcode`.
struct QuietFlag: ParsableArguments {
    @Flag(help: "No progress and no summary.") var quiet = false
}

/// `--strict` of `inspect` and `convert`.
struct StrictFlag: ParsableArguments {
    @Flag(help: "Treat every warning (a value kept out of range, a damaged unit skipped) as an error: write nothing.") var strict = false
}
