import H264

extension EncodeOptions {
    /// The file extensions (lowercased, without the dot) of H.265 output: FFmpeg's `hevc`
    /// muxer's `.265`, `.h265` and `.hevc`.
    static let hevcExtensions: Set<String> = ["265", "h265", "hevc"]

    /// The codec an output path asks for when `--codec` is not given, as FFmpeg picks its
    /// encoder by the output's extension: H.265 for `.265`, `.h265` and `.hevc` (any case), H.264
    /// for everything else (`.264`, `.h264`, no extension, `-` for standard output).
    static func codec(forOutput path: String) -> VideoCodec {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: ".") else { return .h264 }
        return hevcExtensions.contains(name[name.index(after: dot)...].lowercased()) ? .hevc : .h264
    }
}
