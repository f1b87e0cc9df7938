/// One syntax element as read from the bitstream: its name and value.
///
/// Names are the H.264 specification's (clause 7.3 and Annex E), which are also FFmpeg's
/// `trace_headers` names; array elements carry their index, e.g. `offset_for_ref_frame[0]` or
/// `delta_scale[5]` (counted within each scaling list). This is what `h264 inspect --json` prints.
public struct SyntaxElement: Hashable, Sendable, CustomStringConvertible {
    /// The element's name, e.g. `"pic_width_in_mbs_minus1"`.
    public let name: String
    /// The element's value; flags are 0 or 1, `se(v)` values may be negative.
    public let value: Int

    /// Creates an element.
    public init(name: String, value: Int) {
        self.name = name
        self.value = value
    }

    /// `name = value`.
    public var description: String { "\(name) = \(value)" }
}

extension BitReader {
    /// The recorded elements as ``SyntaxElement`` values.
    package var syntaxElements: [SyntaxElement] {
        elements.map { SyntaxElement(name: $0.name, value: $0.value) }
    }
}
