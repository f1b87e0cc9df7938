public import H264

/// The codes of the y4m reader and of the picture size and frame rate parser
/// (``Y4MReader``, ``Y4MHeader/parse(_:)``, ``SizeAndRate``).
extension MediaError.Code {
    /// No input at all where a y4m stream was expected.
    public static let emptyInput = MediaError.Code(rawValue: "emptyInput")
    /// The first line does not start with `YUV4MPEG2`.
    public static let notY4M = MediaError.Code(rawValue: "notY4M")
    /// The y4m header line has no `\n` within its size limit (4096 bytes) or before the end.
    public static let truncatedHeader = MediaError.Code(rawValue: "truncatedHeader")
    /// The y4m header has no `W` or no `H` field.
    public static let missingDimension = MediaError.Code(rawValue: "missingDimension")
    /// A width or height (y4m `W`/`H` or `--size`) outside 1…16384, or odd (4:2:0 needs even
    /// sizes).
    public static let badDimension = MediaError.Code(rawValue: "badDimension")
    /// A frame rate (y4m `F` or `--fps`) that is not a fraction within 0.1…1000 fps.
    public static let badFrameRate = MediaError.Code(rawValue: "badFrameRate")
    /// A y4m `C` field other than 8-bit 4:2:0 (unsupported by the reader, not invalid y4m).
    public static let unsupportedChroma = MediaError.Code(rawValue: "unsupportedChroma")
    /// A y4m `I` field other than progressive or unknown.
    public static let unsupportedInterlacing = MediaError.Code(rawValue: "unsupportedInterlacing")
    /// A y4m frame whose `FRAME` line does not end (within 1024 bytes or before the input does).
    public static let truncatedFrameHeader = MediaError.Code(rawValue: "truncatedFrameHeader")
    /// A y4m frame that does not start with `FRAME`.
    public static let badFrameHeader = MediaError.Code(rawValue: "badFrameHeader")
    /// The input ends inside a frame's planes.
    public static let truncatedFrame = MediaError.Code(rawValue: "truncatedFrame")
}
