/**
 * HostLimits — the sizes native messaging allows, on their own so that what a page bundles (TextRuns, in the SDK)
 * reads them without HostLink's Schemas. HostLink re-exports them: the link's users import them from there.
 */
export const HOST_LIMITS = {
  /** Chrome refuses host → browser frames above 1 MiB. */
  maxFrameToBrowser: 1024 * 1024,
  /** Chrome's own ceiling for browser → host. */
  maxFrameToHost: 64 * 1024 * 1024,
  /** Reassembled message cap; above it the message is answered `MESSAGE_TOO_LARGE` and the port stays up. */
  maxLogicalMessage: 16 * 1024 * 1024
} as const
