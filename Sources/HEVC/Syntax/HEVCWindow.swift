public import MediaCore

/// A window inside the decoded picture, as four offsets in chroma sample units: the SPS's
/// conformance window (`conf_win_*_offset`, clause 7.4.3.2.1) or the VUI's default display
/// window (`def_disp_win_*_offset`, clause E.3.1). One unit is `SubWidthC` luma samples
/// horizontally and `SubHeightC` vertically.
public struct HEVCWindow: Hashable, Sendable {
    /// `*_left_offset`.
    public let leftOffset: Int
    /// `*_right_offset`.
    public let rightOffset: Int
    /// `*_top_offset`.
    public let topOffset: Int
    /// `*_bottom_offset`.
    public let bottomOffset: Int

    /// Creates a window from its offsets.
    public init(leftOffset: Int, rightOffset: Int, topOffset: Int, bottomOffset: Int) {
        self.leftOffset = leftOffset
        self.rightOffset = rightOffset
        self.topOffset = topOffset
        self.bottomOffset = bottomOffset
    }

    /// The window with all offsets 0 (the whole picture).
    public static let none = HEVCWindow(leftOffset: 0, rightOffset: 0, topOffset: 0, bottomOffset: 0)

    /// Reads `PREFIX_left_offset`, `_right_`, `_top_` and `_bottom_` as `ue(v)`, keeping a value
    /// outside `range` with a warning.
    init(reader: inout BitReader, prefix: String, tolerating range: ClosedRange<Int>) throws(MediaError) {
        leftOffset = try reader.readUE("\(prefix)_left_offset", tolerating: range)
        rightOffset = try reader.readUE("\(prefix)_right_offset", tolerating: range)
        topOffset = try reader.readUE("\(prefix)_top_offset", tolerating: range)
        bottomOffset = try reader.readUE("\(prefix)_bottom_offset", tolerating: range)
    }
}
