/**
 * `#error-catalog` everywhere but browser bundles: every code's spec. The specs of codes only Node components raise
 * live here rather than in ErrorCode.ts so that no browser bundle, nor the contracts' size budget, carries them.
 */
import { BROWSER_ERRORS, type BrowserErrorCode, type Catalog, type ErrorCode, type ErrorSpec } from "../ErrorCode.ts"

/** Codes only Node components raise: the native host, Core, providers, pedelec-cli and pedelec-deno. */
export const RUNTIME_ERRORS = {
  // Browser and transport
  EVENT_REPLAY_GAP: {
    message:
      "Events after seq {afterSeq} are no longer available. Call resumeSession() again to continue from the current state.",
    retryable: false,
    raisedBy: ["core"]
  },
  UNAUTHORIZED: {
    message:
      "The caller did not prove it may use this Pedelec runtime. Restart the native host or the agent's session.",
    retryable: false,
    raisedBy: ["core", "desktop"]
  },
  // Sessions
  DEFAULT_PROVIDER_NOT_SET: {
    message:
      "No default provider is set. Choose one in the Pedelec desktop app (or `pedelec-cli settings set defaultProvider <code>`), or pass `provider`.",
    retryable: false,
    raisedBy: ["core"]
  },
  DEFAULT_PROVIDER_UNAVAILABLE: {
    message:
      "The default provider {provider} is not available: {reason}. Install it or choose another default provider.",
    retryable: false,
    raisedBy: ["core"]
  },
  PROVIDER_UNAVAILABLE: {
    message: "Provider {provider} is not available: {reason}. Install or log in to it, or choose another provider.",
    retryable: false,
    raisedBy: ["core"]
  },
  MODEL_REQUIRED: {
    message: "Provider {provider} needs a model. Pass `model`, or set a default model for it in the Pedelec settings.",
    retryable: false,
    raisedBy: ["core"]
  },
  WORKSPACE_CREATE_FAILED: {
    message:
      "The session workspace could not be created: {reason}. Check disk space and the permissions of the Pedelec home.",
    retryable: true,
    raisedBy: ["core"]
  },
  SETTINGS_INVALID: {
    message: "The settings are invalid: {reason}. Fix them in the desktop app or with `pedelec-cli settings set`.",
    retryable: false,
    raisedBy: ["core", "cli"]
  },
  STORAGE_FULL: {
    message:
      "The disk of the Pedelec home is full ({reason}). Free disk space under PEDELEC_HOME (~/.pedelec by default), then retry.",
    retryable: true,
    raisedBy: ["core"]
  },
  STORAGE_UNAVAILABLE: {
    message:
      "The Pedelec home could not be read or written ({reason}). Check that PEDELEC_HOME (~/.pedelec by default) is writable and its disk healthy, then retry.",
    retryable: true,
    raisedBy: ["core"]
  },
  // Providers
  PROVIDER_START_FAILED: {
    message: "{provider} could not be started: {reason}. Check that it is installed and runs from a terminal.",
    retryable: true,
    raisedBy: ["core", "provider"]
  },
  PROVIDER_FAILED: {
    message: "{provider} failed: {reason}. Retry the turn; the session is still usable.",
    retryable: true,
    raisedBy: ["provider"]
  },
  PROVIDER_OUTPUT_INVALID: {
    message:
      "{provider} printed output Pedelec cannot read. Update {provider} or Pedelec; the session is still usable.",
    retryable: true,
    raisedBy: ["provider"]
  },
  PROVIDER_STALLED: {
    message: "{provider} produced no output for {timeoutMs} ms and was stopped. Retry the turn.",
    retryable: true,
    raisedBy: ["core", "provider"]
  },
  PROVIDER_AUTH_REQUIRED: {
    message: "{provider} is not logged in. Log in to it from a terminal, then retry.",
    retryable: false,
    raisedBy: ["provider"]
  },
  OLLAMA_UNAVAILABLE: {
    message: "Ollama at {baseUrl} is not reachable. Start Ollama or fix its address in the Pedelec settings.",
    retryable: true,
    raisedBy: ["provider", "core"]
  },
  OLLAMA_AUTH_FAILED: {
    message: "Ollama rejected the API key. Fix the key in the Pedelec settings.",
    retryable: false,
    raisedBy: ["provider", "core"]
  },
  OLLAMA_MODEL_NOT_FOUND: {
    message: "Ollama has no model {model}. Pull it (`ollama pull {model}`) or choose another model.",
    retryable: false,
    raisedBy: ["provider"]
  },
  OLLAMA_BASE_URL_INVALID: {
    message: "The Ollama address {baseUrl} is not a valid http(s) URL. Fix it in the Pedelec settings.",
    retryable: false,
    raisedBy: ["core", "provider"]
  },
  OLLAMA_API_KEY_REQUIRED: {
    message: "Ollama needs a non-empty API key (use `ollama` for a local server). Set it in the Pedelec settings.",
    retryable: false,
    raisedBy: ["core", "provider"]
  },
  OLLAMA_RATE_LIMITED: {
    message: "Ollama is rate limiting requests. Wait a moment, then retry.",
    retryable: true,
    raisedBy: ["provider", "core"]
  },
  OLLAMA_RESPONSE_INVALID: {
    message: "Ollama sent a response Pedelec cannot read. Check that {baseUrl} is an Ollama-compatible server.",
    retryable: true,
    raisedBy: ["provider", "core"]
  },
  // Tools
  TOOL_NOT_FOUND: {
    message: "The session has no tool {tool}. Run `pedelec-cli tool-list` to see its tools.",
    retryable: false,
    raisedBy: ["core", "cli"]
  },
  TOOL_ARGS_INVALID: {
    message:
      "Arguments for {tool} are invalid at {path}: {reason}. Read `pedelec-cli tool-spec {tool}` and call again.",
    retryable: false,
    raisedBy: ["core"]
  },
  TOOL_QUEUE_FULL: {
    message: "Too many tool calls are waiting for the page. Wait for earlier calls to finish, then retry.",
    retryable: true,
    raisedBy: ["core"]
  },
  TOOL_NOT_CLAIMED: {
    message:
      "This page does not handle the tools of session {sessionId}: another tab claimed them. Resume the session with claimTools to answer here.",
    retryable: false,
    raisedBy: ["core"]
  },
  // Assets
  ASSET_NOT_FOUND: {
    message: "There is no asset at {path}. Call listAssets() to see what exists.",
    retryable: false,
    raisedBy: ["core"]
  },
  ASSET_TICKET_EXPIRED: {
    message: "The transfer ticket expired or was already used. Retry the upload or download.",
    retryable: true,
    raisedBy: ["core"]
  },
  ASSET_UNAUTHORIZED: {
    message:
      "The transfer was refused: it did not come from this session's page. Retry from the page that owns the session.",
    retryable: false,
    raisedBy: ["core"]
  },
  // pedelec-deno
  DENO_UNAVAILABLE: {
    message:
      "pedelec-deno or its Deno runtime is missing. Report this to the user; do not run the script with node, bun or another deno.",
    retryable: false,
    raisedBy: ["deno", "provider"]
  },
  SCRIPT_PATH_INVALID: {
    message: "Script {path} is not a file inside the workspace. Pass a workspace-relative path to an existing script.",
    retryable: false,
    raisedBy: ["deno"]
  },
  SCRIPT_IMPORT_DENIED: {
    message: "Script imports {specifier}, which is outside the workspace or remote. Import only workspace files.",
    retryable: false,
    raisedBy: ["deno"]
  },
  SCRIPT_TIMEOUT: {
    message: "The script ran longer than {timeoutMs} ms and was stopped. Make it do less work per run.",
    retryable: false,
    raisedBy: ["deno"]
  },
  SCRIPT_FAILED: {
    message: "The script failed with exit code {exitCode}. Read its stderr and fix it.",
    retryable: false,
    raisedBy: ["deno"]
  },
  SCRIPT_RESOURCE_LIMIT: {
    message:
      "The script went over pedelec-deno's {limit} limit ({max}) and was stopped. Use less memory, and no Workers or subprocesses.",
    retryable: false,
    raisedBy: ["deno"]
  }
} as const satisfies Catalog<Exclude<ErrorCode, BrowserErrorCode>>

export const ERROR_CATALOG: Catalog<ErrorCode> = { ...BROWSER_ERRORS, ...RUNTIME_ERRORS }

export const CATALOG: { readonly [C in ErrorCode]?: ErrorSpec } = ERROR_CATALOG
