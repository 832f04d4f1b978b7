/**
 * The error catalog: every code any layer may raise, with the message a user sees, whether retrying can help, and
 * which components may raise it. This is the only place a code is defined; the same condition has one code on
 * every layer. Messages say what to do. `{name}` placeholders are filled from the error's `details`.
 */
import * as Schema from "effect/Schema"
import type { Component } from "./Protocol.ts"

export interface ErrorSpec {
  readonly message: string
  readonly retryable: boolean
  readonly raisedBy: ReadonlyArray<Component>
}

const spec = (message: string, retryable: boolean, ...raisedBy: ReadonlyArray<Component>): ErrorSpec => ({
  message,
  retryable,
  raisedBy
})

export const ERROR_CATALOG = {
  // Browser and transport
  EXTENSION_UNAVAILABLE: spec(
    "The Pedelec extension is not reachable from this page. Install or enable it in Chrome, then reload the page.",
    false,
    "sdk"
  ),
  EXTENSION_DISCONNECTED: spec(
    "The connection to the Pedelec extension dropped. Pedelec reconnects on its own; retry the call.",
    true,
    "sdk"
  ),
  REQUEST_TIMEOUT: spec(
    "{method} got no answer within {timeoutMs} ms. Check that the Pedelec desktop app is running, then retry.",
    true,
    "sdk",
    "extension",
    "native-host"
  ),
  PROTOCOL_ERROR: spec(
    "A Pedelec component sent a message this one cannot read. Update the SDK, extension and desktop app to the same release.",
    false,
    "sdk",
    "extension",
    "native-host",
    "core",
    "cli"
  ),
  EVENT_REPLAY_GAP: spec(
    "Events after seq {afterSeq} are no longer available. Call resumeSession() again to continue from the current state.",
    false,
    "core"
  ),
  PROTOCOL_VERSION_MISMATCH: spec(
    "This component speaks protocol {actual} but its peer speaks {expected}. Update Pedelec so all parts are the same release.",
    false,
    "extension",
    "native-host",
    "core",
    "cli"
  ),
  INVALID_INPUT: spec(
    "Invalid input: {reason}. Fix the call's arguments.",
    false,
    "sdk",
    "extension",
    "native-host",
    "core",
    "cli"
  ),
  APPROVAL_REQUIRED: spec(
    "This site is not approved to use Pedelec. Call createSession() to ask the user for approval.",
    false,
    "extension"
  ),
  APPROVAL_PENDING: spec(
    "Another site is waiting for the user's approval. Try again once that prompt is answered.",
    true,
    "extension"
  ),
  APPROVAL_REJECTED: spec(
    "The user rejected this site's request to use Pedelec. Ask again later; the refusal is remembered for 10 minutes.",
    false,
    "extension"
  ),
  APPROVAL_TIMEOUT: spec(
    "The approval prompt was not answered within 60 seconds. Retry and ask the user to approve in the Pedelec window.",
    true,
    "extension"
  ),
  NATIVE_HOST_UNAVAILABLE: spec(
    "The Pedelec native host could not be started. Install the desktop app or run `pedelec-cli install-native-host`, then retry.",
    false,
    "extension"
  ),
  NATIVE_CONNECTION_CLOSED: spec(
    "The connection to the Pedelec native host closed. Pedelec reconnects on its own; retry the call.",
    true,
    "extension"
  ),
  CORE_RUNTIME_UNAVAILABLE: spec(
    "The Pedelec desktop runtime is not running and could not be started. Start the desktop app (or `pedelec-core`), then retry.",
    true,
    "native-host",
    "cli"
  ),
  MESSAGE_TOO_LARGE: spec(
    "A message of {bytes} bytes exceeds the {limit}-byte limit. Send less data at once, or use an asset for file content.",
    false,
    "sdk",
    "extension",
    "native-host",
    "core"
  ),
  UNAUTHORIZED: spec(
    "The caller did not prove it may use this Pedelec runtime. Restart the native host or the agent's session.",
    false,
    "core"
  ),
  // Sessions
  SESSION_NOT_FOUND: spec(
    "Session {sessionId} does not exist. Create a new session with createSession().",
    false,
    "core",
    "extension"
  ),
  SESSION_BUSY: spec(
    "Session {sessionId} is already running a turn. Wait for it to complete, or call cancel() first.",
    true,
    "sdk",
    "core"
  ),
  SESSION_ENDED: spec("Session {sessionId} has ended. Create a new session to continue.", false, "sdk", "core"),
  SESSION_ACCESS_DENIED: spec(
    "Session {sessionId} belongs to another site. Use a session this origin created.",
    false,
    "extension",
    "core"
  ),
  DEFAULT_PROVIDER_NOT_SET: spec(
    "No default provider is set. Choose one in the Pedelec desktop app (or `pedelec-cli settings set defaultProvider <code>`), or pass `provider`.",
    false,
    "core"
  ),
  DEFAULT_PROVIDER_UNAVAILABLE: spec(
    "The default provider {provider} is not available: {reason}. Install it or choose another default provider.",
    false,
    "core"
  ),
  PROVIDER_NOT_FOUND: spec(
    "Unknown provider {provider}. Use one of the codes listProviders() returns.",
    false,
    "sdk",
    "core"
  ),
  PROVIDER_UNAVAILABLE: spec(
    "Provider {provider} is not available: {reason}. Install or log in to it, or choose another provider.",
    false,
    "core"
  ),
  MODEL_REQUIRED: spec(
    "Provider {provider} needs a model. Pass `model`, or set a default model for it in the Pedelec settings.",
    false,
    "core"
  ),
  EFFORT_LEVEL_INVALID: spec(
    "Effort level {effortLevel} cannot be used with {provider}: {reason}. Use low, medium or high, or fix the effort profile in the settings.",
    false,
    "sdk",
    "core"
  ),
  WORKSPACE_PATH_INVALID: spec(
    "Workspace path {path} cannot be used: {reason}. Choose an existing, absolute project directory.",
    false,
    "extension",
    "core"
  ),
  WORKSPACE_CREATE_FAILED: spec(
    "The session workspace could not be created: {reason}. Check disk space and the permissions of the Pedelec home.",
    true,
    "core"
  ),
  SETTINGS_INVALID: spec(
    "The settings are invalid: {reason}. Fix them in the desktop app or with `pedelec-cli settings set`.",
    false,
    "core",
    "cli"
  ),
  // Providers
  PROVIDER_START_FAILED: spec(
    "{provider} could not be started: {reason}. Check that it is installed and runs from a terminal.",
    true,
    "core",
    "provider"
  ),
  PROVIDER_FAILED: spec("{provider} failed: {reason}. Retry the turn; the session is still usable.", true, "provider"),
  PROVIDER_OUTPUT_INVALID: spec(
    "{provider} printed output Pedelec cannot read. Update {provider} or Pedelec; the session is still usable.",
    true,
    "provider"
  ),
  PROVIDER_STALLED: spec(
    "{provider} produced no output for {timeoutMs} ms and was stopped. Retry the turn.",
    true,
    "core",
    "provider"
  ),
  PROVIDER_AUTH_REQUIRED: spec(
    "{provider} is not logged in. Log in to it from a terminal, then retry.",
    false,
    "provider"
  ),
  OLLAMA_UNAVAILABLE: spec(
    "Ollama at {baseUrl} is not reachable. Start Ollama or fix its address in the Pedelec settings.",
    true,
    "provider"
  ),
  OLLAMA_AUTH_FAILED: spec("Ollama rejected the API key. Fix the key in the Pedelec settings.", false, "provider"),
  OLLAMA_MODEL_NOT_FOUND: spec(
    "Ollama has no model {model}. Pull it (`ollama pull {model}`) or choose another model.",
    false,
    "provider"
  ),
  OLLAMA_BASE_URL_INVALID: spec(
    "The Ollama address {baseUrl} is not a valid http(s) URL. Fix it in the Pedelec settings.",
    false,
    "core",
    "provider"
  ),
  OLLAMA_API_KEY_REQUIRED: spec(
    "Ollama needs a non-empty API key (use `ollama` for a local server). Set it in the Pedelec settings.",
    false,
    "core",
    "provider"
  ),
  OLLAMA_RATE_LIMITED: spec("Ollama is rate limiting requests. Wait a moment, then retry.", true, "provider"),
  OLLAMA_RESPONSE_INVALID: spec(
    "Ollama sent a response Pedelec cannot read. Check that {baseUrl} is an Ollama-compatible server.",
    true,
    "provider"
  ),
  // Tools
  TOOLS_MANIFEST_INVALID: spec(
    "The tool manifest is invalid at {pointer}: {reason}. Fix the tool definitions passed to createSession().",
    false,
    "sdk",
    "core"
  ),
  TOOL_NOT_FOUND: spec(
    "The session has no tool {tool}. Run `pedelec-cli tool-list` to see its tools.",
    false,
    "core",
    "cli"
  ),
  TOOL_ARGS_INVALID: spec(
    "Arguments for {tool} are invalid at {path}: {reason}. Read `pedelec-cli tool-spec {tool}` and call again.",
    false,
    "core"
  ),
  TOOL_TIMEOUT: spec(
    "Tool {tool} did not answer within {timeoutMs} ms. Retry, or tell the user the page did not respond.",
    true,
    "core"
  ),
  TOOL_CANCELLED: spec("The call to {tool} was cancelled before the page answered.", true, "core", "sdk"),
  TOOL_QUEUE_FULL: spec(
    "Too many tool calls are waiting for the page. Wait for earlier calls to finish, then retry.",
    true,
    "core"
  ),
  TOOL_OWNER_GONE: spec(
    "The page that handles {tool} has gone. Tell the user to reopen the page, then retry.",
    true,
    "core"
  ),
  TOOL_HANDLER_NOT_FOUND: spec(
    "The page has no handler for {tool}. Register one with onTool() or pass `handler` to defineTool().",
    false,
    "sdk"
  ),
  TOOL_HANDLER_ERROR: spec("The page's handler for {tool} failed: {reason}.", false, "sdk"),
  TOOL_RESULT_INVALID: spec(
    "The page's handler for {tool} returned a value that is not plain JSON. Return JSON-serializable data.",
    false,
    "sdk",
    "core"
  ),
  TOOL_RESULT_TOO_LARGE: spec(
    "The result of {tool} is {bytes} bytes, over the {limit}-byte limit. Return less data, or write it to an asset.",
    false,
    "sdk",
    "core"
  ),
  // Assets
  ASSET_TOO_LARGE: spec(
    "The asset is {bytes} bytes, over the {limit}-byte limit. Upload a smaller file.",
    false,
    "sdk",
    "core"
  ),
  ASSET_PATH_INVALID: spec(
    "Asset path {path} is invalid: {reason}. Use a relative path without `..`.",
    false,
    "sdk",
    "core"
  ),
  ASSET_NOT_FOUND: spec("There is no asset at {path}. Call listAssets() to see what exists.", false, "core"),
  ASSET_TICKET_EXPIRED: spec(
    "The transfer ticket expired or was already used. Retry the upload or download.",
    true,
    "core"
  ),
  ASSET_UNAUTHORIZED: spec(
    "The transfer was refused: it did not come from this session's page. Retry from the page that owns the session.",
    false,
    "core"
  ),
  ASSET_TRANSFER_FAILED: spec(
    "The file transfer to the local Pedelec runtime failed: {reason}. If Chrome asked about local network access, allow it for this site, then retry.",
    true,
    "sdk"
  ),
  ASSET_DECODE_FAILED: spec("Asset {path} is not valid {as}. Read it as a file instead.", false, "sdk"),
  // pedelec-deno
  DENO_UNAVAILABLE: spec(
    "pedelec-deno or its Deno runtime is missing. Report this to the user; do not run the script with node, bun or another deno.",
    false,
    "deno",
    "provider"
  ),
  SCRIPT_PATH_INVALID: spec(
    "Script {path} is not a file inside the workspace. Pass a workspace-relative path to an existing script.",
    false,
    "deno"
  ),
  SCRIPT_IMPORT_DENIED: spec(
    "Script imports {specifier}, which is outside the workspace or remote. Import only workspace files.",
    false,
    "deno"
  ),
  SCRIPT_TIMEOUT: spec(
    "The script ran longer than {timeoutMs} ms and was stopped. Make it do less work per run.",
    false,
    "deno"
  ),
  SCRIPT_FAILED: spec("The script failed with exit code {exitCode}. Read its stderr and fix it.", false, "deno"),
  // Bugs
  INTERNAL_ERROR: spec(
    "Pedelec hit an unexpected internal error in {component}. Retry; if it persists, report it with the Core log.",
    true,
    "sdk",
    "extension",
    "native-host",
    "core",
    "provider",
    "cli",
    "deno"
  )
} as const satisfies Record<string, ErrorSpec>

export type ErrorCode = keyof typeof ERROR_CATALOG

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ReadonlyArray<ErrorCode>

export const ErrorCode = Schema.Literals(ERROR_CODES)
