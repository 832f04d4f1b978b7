/**
 * The error catalog: every code any layer may raise, with the message a user sees, whether retrying can help, and
 * which components may raise it. This is the only place a code is defined; the same condition has one code on
 * every layer. Messages say what to do. `{name}` placeholders are filled from the error's `details`.
 *
 * The specs are split by who raises them, because page authors pay for every byte of the SDK: browser bundles carry
 * only the messages of codes the SDK or the extension raise (`#error-catalog`, see catalog/). Every other error
 * reaches a browser from Node with its message already filled in.
 */
import * as Schema from "effect/Schema"
import type { Component } from "./Protocol.ts"

export interface ErrorSpec {
  readonly message: string
  readonly retryable: boolean
  readonly raisedBy: ReadonlyArray<Component>
}

/** Every code, by area. The catalogs below and catalog/full.ts's RUNTIME_ERRORS give each its spec; their types make sure none is missing or extra. */
export const ERROR_CODES = [
  // Browser and transport
  "EXTENSION_UNAVAILABLE",
  "EXTENSION_DISCONNECTED",
  "REQUEST_TIMEOUT",
  "PROTOCOL_ERROR",
  "EVENT_REPLAY_GAP",
  "PROTOCOL_VERSION_MISMATCH",
  "INVALID_INPUT",
  "APPROVAL_REQUIRED",
  "APPROVAL_PENDING",
  "APPROVAL_REJECTED",
  "APPROVAL_TIMEOUT",
  "NATIVE_HOST_UNAVAILABLE",
  "NATIVE_CONNECTION_CLOSED",
  "CORE_RUNTIME_UNAVAILABLE",
  "MESSAGE_TOO_LARGE",
  "UNAUTHORIZED",
  // Sessions
  "SESSION_NOT_FOUND",
  "SESSION_BUSY",
  "SESSION_ENDED",
  "SESSION_ACCESS_DENIED",
  "DEFAULT_PROVIDER_NOT_SET",
  "DEFAULT_PROVIDER_UNAVAILABLE",
  "PROVIDER_NOT_FOUND",
  "PROVIDER_UNAVAILABLE",
  "MODEL_REQUIRED",
  "EFFORT_LEVEL_INVALID",
  "WORKSPACE_PATH_INVALID",
  "WORKSPACE_CREATE_FAILED",
  "SETTINGS_INVALID",
  "POLICY_PROVIDER_NOT_ALLOWED",
  "POLICY_WORKSPACE_NOT_ALLOWED",
  "POLICY_SESSION_LIMIT",
  "STORAGE_FULL",
  "STORAGE_UNAVAILABLE",
  // Providers
  "PROVIDER_START_FAILED",
  "PROVIDER_FAILED",
  "PROVIDER_OUTPUT_INVALID",
  "PROVIDER_STALLED",
  "PROVIDER_AUTH_REQUIRED",
  "OLLAMA_UNAVAILABLE",
  "OLLAMA_AUTH_FAILED",
  "OLLAMA_MODEL_NOT_FOUND",
  "OLLAMA_BASE_URL_INVALID",
  "OLLAMA_API_KEY_REQUIRED",
  "OLLAMA_RATE_LIMITED",
  "OLLAMA_RESPONSE_INVALID",
  // Tools
  "TOOLS_MANIFEST_INVALID",
  "TOOL_NOT_FOUND",
  "TOOL_ARGS_INVALID",
  "TOOL_TIMEOUT",
  "TOOL_CANCELLED",
  "TOOL_QUEUE_FULL",
  "TOOL_OWNER_GONE",
  "TOOL_NOT_CLAIMED",
  "TOOL_DENIED_BY_USER",
  "TOOL_HANDLER_NOT_FOUND",
  "TOOL_HANDLER_ERROR",
  "TOOL_RESULT_INVALID",
  "TOOL_RESULT_TOO_LARGE",
  // Assets
  "ASSET_TOO_LARGE",
  "ASSET_PATH_INVALID",
  "ASSET_NOT_FOUND",
  "ASSET_TICKET_EXPIRED",
  "ASSET_UNAUTHORIZED",
  "ASSET_TRANSFER_FAILED",
  "ASSET_DECODE_FAILED",
  // pedelec-deno
  "DENO_UNAVAILABLE",
  "SCRIPT_PATH_INVALID",
  "SCRIPT_IMPORT_DENIED",
  "SCRIPT_TIMEOUT",
  "SCRIPT_FAILED",
  "SCRIPT_RESOURCE_LIMIT",
  // Bugs
  "INTERNAL_ERROR"
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

export const ErrorCode = Schema.Literals(ERROR_CODES)

export type Catalog<C extends ErrorCode> = { readonly [K in C]: ErrorSpec }

/** Codes the SDK raises (their `raisedBy` names `sdk`; a test keeps it so): the page bundle's whole catalog. */
export const PAGE_ERRORS = {
  // Browser and transport
  EXTENSION_UNAVAILABLE: {
    message:
      "The Pedelec extension is not reachable from this page. Install or enable it in Chrome, then reload the page.",
    retryable: false,
    raisedBy: ["sdk"]
  },
  EXTENSION_DISCONNECTED: {
    message: "The connection to the Pedelec extension dropped. Pedelec reconnects on its own; retry the call.",
    retryable: true,
    raisedBy: ["sdk"]
  },
  REQUEST_TIMEOUT: {
    message: "{method} got no answer within {timeoutMs} ms. Check that the Pedelec desktop app is running, then retry.",
    retryable: true,
    raisedBy: ["sdk", "extension", "native-host"]
  },
  PROTOCOL_ERROR: {
    message:
      "A Pedelec component sent a message this one cannot read. Update the SDK, extension and desktop app to the same release.",
    retryable: false,
    raisedBy: ["sdk", "extension", "native-host", "core", "cli", "desktop"]
  },
  PROTOCOL_VERSION_MISMATCH: {
    message:
      "This component speaks protocol {actual} but its peer speaks {expected}. Update Pedelec so all parts are the same release.",
    retryable: false,
    raisedBy: ["extension", "native-host", "core", "cli", "sdk"]
  },
  INVALID_INPUT: {
    message: "Invalid input: {reason}. Fix the call's arguments.",
    retryable: false,
    raisedBy: ["sdk", "extension", "native-host", "core", "cli", "desktop"]
  },
  APPROVAL_REQUIRED: {
    message: "This site is not approved to use Pedelec. Call createSession() to ask the user for approval.",
    retryable: false,
    raisedBy: ["extension", "sdk"]
  },
  CORE_RUNTIME_UNAVAILABLE: {
    message:
      "The Pedelec desktop runtime is not running and could not be started. Start the desktop app (or `pedelec-core`), then retry.",
    retryable: true,
    raisedBy: ["native-host", "cli", "sdk", "desktop"]
  },
  MESSAGE_TOO_LARGE: {
    message:
      "A message of {bytes} bytes exceeds the {limit}-byte limit. Send less data at once, or use an asset for file content.",
    retryable: false,
    raisedBy: ["sdk", "extension", "native-host", "core"]
  },
  SESSION_BUSY: {
    message: "Session {sessionId} is already running a turn. Wait for it to complete, or call cancel() first.",
    retryable: true,
    raisedBy: ["sdk", "core"]
  },
  SESSION_ENDED: {
    message: "Session {sessionId} has ended. Create a new session to continue.",
    retryable: false,
    raisedBy: ["sdk", "core"]
  },
  PROVIDER_NOT_FOUND: {
    message: "Unknown provider {provider}. Use one of the codes listProviders() returns.",
    retryable: false,
    raisedBy: ["sdk", "core"]
  },
  EFFORT_LEVEL_INVALID: {
    message:
      "Effort level {effortLevel} cannot be used with {provider}: {reason}. Use low, medium or high, or fix the effort profile in the settings.",
    retryable: false,
    raisedBy: ["sdk", "core"]
  },
  // Tools
  TOOLS_MANIFEST_INVALID: {
    message: "The tool manifest is invalid at {pointer}: {reason}. Fix the tool definitions passed to createSession().",
    retryable: false,
    raisedBy: ["sdk", "extension", "core"]
  },
  TOOL_TIMEOUT: {
    message: "Tool {tool} did not answer within {timeoutMs} ms. Retry, or tell the user the page did not respond.",
    retryable: true,
    raisedBy: ["core", "sdk"]
  },
  TOOL_CANCELLED: {
    message: "The call to {tool} was cancelled before the page answered.",
    retryable: true,
    raisedBy: ["core", "sdk"]
  },
  TOOL_OWNER_GONE: {
    message: "The page that handles {tool} has gone. Tell the user to reopen the page, then retry.",
    retryable: true,
    raisedBy: ["core", "sdk"]
  },
  TOOL_HANDLER_NOT_FOUND: {
    message: "The page has no handler for {tool}. Register one with onTool() or pass `handler` to defineTool().",
    retryable: false,
    raisedBy: ["sdk"]
  },
  TOOL_HANDLER_ERROR: {
    message: "The page's handler for {tool} failed: {reason}.",
    retryable: false,
    raisedBy: ["sdk"]
  },
  TOOL_RESULT_INVALID: {
    message: "The page's handler for {tool} returned a value that is not plain JSON. Return JSON-serializable data.",
    retryable: false,
    raisedBy: ["sdk", "core"]
  },
  TOOL_RESULT_TOO_LARGE: {
    message:
      "The result of {tool} is {bytes} bytes, over the {limit}-byte limit. Return less data, or write it to an asset.",
    retryable: false,
    raisedBy: ["sdk", "core"]
  },
  // Assets
  ASSET_TOO_LARGE: {
    message: "The asset is {bytes} bytes, over the {limit}-byte limit. Upload a smaller file.",
    retryable: false,
    raisedBy: ["sdk", "core"]
  },
  ASSET_PATH_INVALID: {
    message: "Asset path {path} is invalid: {reason}. Use a relative path without `..`.",
    retryable: false,
    raisedBy: ["sdk", "core"]
  },
  ASSET_TRANSFER_FAILED: {
    message:
      "The file transfer to the local Pedelec runtime failed: {reason}. If Chrome asked about local network access, allow it for this site, then retry.",
    retryable: true,
    raisedBy: ["sdk"]
  },
  ASSET_DECODE_FAILED: {
    message: "Asset {path} is not valid {as}. Read it as a file instead.",
    retryable: false,
    raisedBy: ["sdk"]
  },
  // Bugs
  INTERNAL_ERROR: {
    message:
      "Pedelec hit an unexpected internal error in {component}. Retry; if it persists, report it with the Core log.",
    retryable: true,
    raisedBy: ["sdk", "extension", "native-host", "core", "provider", "cli", "deno", "desktop"]
  }
} as const satisfies Partial<Catalog<ErrorCode>>

/** Codes the extension raises and the SDK does not: they reach a page with their message already written. */
export const EXTENSION_ERRORS = {
  APPROVAL_PENDING: {
    message: "Another site is waiting for the user's approval. Try again once that prompt is answered.",
    retryable: true,
    raisedBy: ["extension"]
  },
  APPROVAL_REJECTED: {
    message:
      "The user rejected this site's request to use Pedelec. Ask again later; the refusal is remembered for 10 minutes.",
    retryable: false,
    raisedBy: ["extension"]
  },
  APPROVAL_TIMEOUT: {
    message:
      "The approval prompt was not answered within 60 seconds. Retry and ask the user to approve in the Pedelec window.",
    retryable: true,
    raisedBy: ["extension"]
  },
  NATIVE_HOST_UNAVAILABLE: {
    message:
      "The Pedelec native host could not be started. Install the desktop app or run `pedelec-cli install-native-host`, then retry.",
    retryable: false,
    raisedBy: ["extension", "desktop"]
  },
  NATIVE_CONNECTION_CLOSED: {
    message: "The connection to the Pedelec native host closed. Pedelec reconnects on its own; retry the call.",
    retryable: true,
    raisedBy: ["extension"]
  },
  // Sessions
  SESSION_NOT_FOUND: {
    message: "Session {sessionId} does not exist. Create a new session with createSession().",
    retryable: false,
    raisedBy: ["core", "extension"]
  },
  SESSION_ACCESS_DENIED: {
    message: "Session {sessionId} belongs to another site. Use a session this origin created.",
    retryable: false,
    raisedBy: ["extension", "core"]
  },
  WORKSPACE_PATH_INVALID: {
    message: "Workspace path {path} cannot be used: {reason}. Choose an existing, absolute project directory.",
    retryable: false,
    raisedBy: ["extension", "core"]
  },
  // The site's policy, set by the user in the options page or the desktop app: each rule refuses with its own code.
  POLICY_PROVIDER_NOT_ALLOWED: {
    message:
      "This site may not use provider {provider}; its policy allows {allowed}. Ask for an allowed provider, or change the site's policy in the Pedelec options page.",
    retryable: false,
    raisedBy: ["extension", "core"]
  },
  POLICY_WORKSPACE_NOT_ALLOWED: {
    message:
      "This site may not ask for a workspace path. Leave `workspace` out to get a managed workspace, or allow paths in the site's policy.",
    retryable: false,
    raisedBy: ["extension", "core"]
  },
  POLICY_SESSION_LIMIT: {
    message:
      "This site has {live} live sessions, its policy's limit is {limit}. End one first, or raise the limit in the site's policy.",
    retryable: true,
    raisedBy: ["extension", "core"]
  },
  // Tools
  TOOL_DENIED_BY_USER: {
    message:
      "The user refused this call to {tool}. Do not retry the same call: ask the user what they want done instead.",
    retryable: false,
    raisedBy: ["extension"]
  }
} as const satisfies Partial<Catalog<ErrorCode>>

/** Codes the SDK or the extension raise. */
export const BROWSER_ERRORS = /* @__PURE__ */ Object.assign({}, PAGE_ERRORS, EXTENSION_ERRORS)

export type BrowserErrorCode = keyof typeof PAGE_ERRORS | keyof typeof EXTENSION_ERRORS
