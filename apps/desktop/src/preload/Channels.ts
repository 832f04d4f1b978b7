/**
 * Channels — the Electron IPC channel names between the preload and main, in one place for both bundles. Only
 * names: what travels on them is the bridge's contract (DesktopLink's encoded requests and answers), and the watch
 * envelope (`{id, request}` out, `{id, item}` back) is decoded in main by BridgeIpc.
 */
export const CHANNELS = {
  /** invoke: one request, one encoded response. */
  call: "pedelec:call",
  /** send: `{id, request}` opens a watch named `id` for this page. */
  watch: "pedelec:watch",
  /** send: `{id}` ends that watch. */
  unwatch: "pedelec:unwatch",
  /** main → page: `{id, item}` for each encoded stream item, the last one its `end` or `error`. */
  event: "pedelec:event"
} as const
