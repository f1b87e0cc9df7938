/// The chroma sampling an SPS signals (ITU-T H.265 Table 6-1).
public enum HEVCChromaFormat {
    /// `SubWidthC` and `SubHeightC` (Table 6-1): 1 and 1 for monochrome, 4:4:4 and separate
    /// colour planes; 2 and 2 for 4:2:0; 2 and 1 for 4:2:2.
    public static func subsampling(chromaFormatIdc: Int, separateColourPlane: Bool) -> (width: Int, height: Int) {
        if separateColourPlane { return (1, 1) }
        switch chromaFormatIdc {
        case 1: return (2, 2)
        case 2: return (2, 1)
        default: return (1, 1)
        }
    }
}
