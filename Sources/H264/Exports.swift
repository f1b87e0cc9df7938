// The codec-neutral core (framing, bit reading, errors, the format description) comes with
// `import H264`.
@_exported public import MediaCore
