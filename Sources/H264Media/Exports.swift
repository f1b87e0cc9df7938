// H264Media is now MediaContainers (FLV, y4m, framemd5, the inspection model); this module
// re-exports it for one minor release (0.2.x). Import MediaContainers instead.
@_exported public import MediaContainers
