// The codec-neutral core (framing, bit reading, errors, the format description) comes with
// `import HEVC`.
@_exported public import MediaCore
