/**
 * Errors — the error body each provider's API sends with an HTTP error status, so FAIL_HTTP[<status>]END reaches a
 * CLI the way a real outage, a bad key or a rate limit would and the adapter under test maps it to its own code (for
 * Ollama: 401/403 → OLLAMA_AUTH_FAILED, 404 → OLLAMA_MODEL_NOT_FOUND, 429 → OLLAMA_RATE_LIMITED, SPEC §10). Every
 * message starts with `failureMessage(status)` so a test can find it in the agent's output.
 */

import { failureMessage } from "./Wire.ts"

const byStatus = (table: Readonly<Record<number, string>>, status: number, clientError: string, serverError: string) =>
  table[status] ?? (status < 500 ? clientError : serverError)

const OPENAI_TYPES: Readonly<Record<number, string>> = {
  401: "invalid_request_error",
  403: "permission_error",
  404: "invalid_request_error",
  429: "rate_limit_error"
}
const OPENAI_CODES: Readonly<Record<number, string>> = {
  401: "invalid_api_key",
  404: "model_not_found",
  429: "rate_limit_exceeded"
}

/** OpenAI's shape, for the Responses API (codex) and Chat Completions (opencode). */
export const openAiError = (status: number) => ({
  error: {
    message: failureMessage(status),
    type: byStatus(OPENAI_TYPES, status, "invalid_request_error", "server_error"),
    param: null,
    code: OPENAI_CODES[status] ?? "scripted"
  }
})

const ANTHROPIC_TYPES: Readonly<Record<number, string>> = {
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error"
}

export const anthropicError = (status: number) => ({
  type: "error",
  error: {
    type: byStatus(ANTHROPIC_TYPES, status, "invalid_request_error", "api_error"),
    message: failureMessage(status)
  }
})

const GEMINI_STATUSES: Readonly<Record<number, string>> = {
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED"
}

/** Google's RPC status shape, which the genai SDK in gemini-cli puts into its `[API Error: …]` message. */
export const geminiError = (status: number) => ({
  error: {
    code: status,
    message: failureMessage(status),
    status: byStatus(GEMINI_STATUSES, status, "INVALID_ARGUMENT", "INTERNAL")
  }
})

/** Ollama's `{error: string}`; a 404 names the model as Ollama does ("model … not found, try pulling it first"). */
/** `echo` (ECHO_AUTH): the refused header, quoted as a careless server does ("invalid API key: Bearer …"). */
export const ollamaError = (status: number, model: string, echo?: string) => ({
  error:
    status === 404
      ? `model "${model}" not found, try pulling it first: ${failureMessage(status)}`
      : echo === undefined
        ? failureMessage(status)
        : `${failureMessage(status)}: ${status === 401 ? "invalid API key" : "upstream said"}: ${echo}`
})
