/**
 * Wire constants that need no Effect: the protocol version, the proof headers of Core IPC, and the patterns of the
 * ids a client checks before it connects. The schemas are built from these; pedelec-cli's agent path imports them
 * directly, so a client that must start fast loads no Schema and still restates nothing.
 */

/**
 * The id Chrome gives the Pedelec extension: derived from the public `key` in apps/extension/manifest.json (a test
 * recomputes it), so it is the same on every machine. The SDK connects to it and the native host manifest allows it.
 */
export const PEDELEC_EXTENSION_ID = "ddblbapapcmhnigfndjiecoehcgdaljd"

/** Bumped on any incompatible change to a message, event or method of any link. */
export const PROTOCOL_VERSION = 1

/** Request headers that carry a caller's proof on Core IPC; never logged. */
export const AUTH_HEADERS = { launchSecret: "x-pedelec-launch-secret", sessionCap: "x-pedelec-session-cap" } as const

/**
 * Nesting every link accepts. Schema decoding is recursive, so a deeper message (a few KB of `[[[[…]]]]`) could
 * exhaust the stack: each link checks this, iteratively, before it decodes anything (pedelec-cli before it parses
 * an agent's arguments any further, which is why it lives here and not with the JSON pointers).
 */
export const MAX_JSON_DEPTH = 64

export const WIRE_PATTERNS = {
  /** `pedelec_thread_id`: at least 128 random bits, base64url. */
  sessionId: /^[A-Za-z0-9_-]{22,64}$/,
  /** A session capability or a launch secret: 256 random bits, base64url. */
  secret: /^[A-Za-z0-9_-]{43,128}$/,
  toolName: /^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/,
  errorCode: /^[A-Z][A-Z0-9_]*$/
} as const
