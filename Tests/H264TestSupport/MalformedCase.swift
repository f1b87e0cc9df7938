public import H264
public import Testing

/// One entry of the malformed-input catalogue: what is wrong, and the exact error code and field
/// the library must report for it.
public struct MalformedCase: Sendable, CustomTestStringConvertible {
    public var name: String
    public var code: MediaError.Code
    public var field: String?
    public var body: @Sendable () throws -> Void
    public var testDescription: String { name }

    public init(_ name: String, _ code: MediaError.Code, field: String?, _ body: @escaping @Sendable () throws -> Void) {
        self.name = name
        self.code = code
        self.field = field
        self.body = body
    }

    /// Runs the case and records an issue unless it throws an `MediaError` with the expected code
    /// and field.
    public func expectRejected(sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("\(name): accepted, expected \(code)", sourceLocation: sourceLocation)
        } catch let error as MediaError {
            #expect(error.code == code, "\(name): \(error)", sourceLocation: sourceLocation)
            #expect(error.field == field, "\(name): \(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(name): \(error) is not an MediaError", sourceLocation: sourceLocation)
        }
    }
}
