/// Which pixel formats a y4m stream can hold, and the tags FFmpeg's yuv4mpegpipe muxer writes
/// for them.
extension Y4MHeader {
    /// The colourspace tag (without its `C`) and the `X` extension FFmpeg's yuv4mpegpipe muxer
    /// writes for planar YUV or grey samples, or nil when y4m cannot hold them.
    ///
    /// y4m holds 8-bit 4:2:0, 4:2:2, 4:4:4 and grey (`yuv420p`, `yuv422p`, `yuv444p`, their
    /// `yuvj` twins and `gray`); with `-strict -1` also 4:2:0, 4:2:2 and 4:4:4 at 9, 10, 12 and
    /// 14 bits and grey at 9, 10 and 12. Not grey at 14 bits, nor planar RGB, interleaved chroma
    /// or packed RGB, which have no `chroma_format_idc` here.
    ///
    /// - Parameters:
    ///   - chromaFormatIdc: `chroma_format_idc` (clause 7.4.2.1.1): 0 grey, 1 4:2:0, 2 4:2:2,
    ///     3 4:4:4.
    ///   - bitDepth: bits per sample, 8…14.
    /// - Returns: e.g. `("420jpeg", "YSCSS=420JPEG")`, `("mono", nil)`, `("422p10", "YSCSS=422P10")`.
    public static func colourspace(chromaFormatIdc: Int, bitDepth: Int) -> (colorspace: String, extension: String?)? {
        let subsampling: String
        switch chromaFormatIdc {
        case 0:
            switch bitDepth {
            case 8: return ("mono", nil)
            case 9, 10, 12: return ("mono\(bitDepth)", nil)
            default: return nil
            }
        case 1: subsampling = "420"
        case 2: subsampling = "422"
        case 3: subsampling = "444"
        default: return nil
        }
        switch bitDepth {
        case 8:
            let tag = subsampling == "420" ? "420jpeg" : subsampling
            return (tag, "YSCSS=\(tag.uppercased())")
        case 9, 10, 12, 14:
            return ("\(subsampling)p\(bitDepth)", "YSCSS=\(subsampling)P\(bitDepth)")
        default:
            return nil
        }
    }
}
