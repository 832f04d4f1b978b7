/**
 * The error catalog against SPEC §10, and `PedelecError`: building from a code, filling placeholders, narrowing,
 * and the wire form.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { ERROR_CATALOG } from "../src/catalog/full.ts"
import { BROWSER_ERRORS, ERROR_CODES, type ErrorCode, PAGE_ERRORS } from "../src/ErrorCode.ts"
import {
  formatMessage,
  hasCode,
  isPedelecError,
  PedelecError,
  type PedelecErrorWire,
  PedelecErrorWire as PedelecErrorWireSchema
} from "../src/PedelecError.ts"
import { Component } from "../src/Protocol.ts"

/** SPEC §10, verbatim, in its order. */
const SPEC_CODES = [
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
  // Deno
  "DENO_UNAVAILABLE",
  "SCRIPT_PATH_INVALID",
  "SCRIPT_IMPORT_DENIED",
  "SCRIPT_TIMEOUT",
  "SCRIPT_FAILED"
]

/** Codes contracts defines beyond SPEC §10. */
const OUR_ADDITIONS = [
  "POLICY_PROVIDER_NOT_ALLOWED",
  "POLICY_WORKSPACE_NOT_ALLOWED",
  "POLICY_SESSION_LIMIT",
  "STORAGE_FULL",
  "STORAGE_UNAVAILABLE",
  "TOOL_DENIED_BY_USER",
  "SCRIPT_RESOURCE_LIMIT",
  "INTERNAL_ERROR"
]

const COMPONENTS: ReadonlyArray<string> = Component.literals
const placeholdersOf = (template: string) =>
  [...template.matchAll(/\{([A-Za-z][A-Za-z0-9]*)\}/g)].flatMap((match) => match[1] ?? [])
const strict = { onExcessProperty: "error" } as const

describe("the catalog", () => {
  it("has every code of SPEC §10", () => {
    assert.deepStrictEqual(
      SPEC_CODES.filter((code) => !ERROR_CODES.includes(code as ErrorCode)),
      []
    )
  })

  it("has no code beyond SPEC §10 but our additions", () => {
    assert.deepStrictEqual(
      ERROR_CODES.filter((code) => !SPEC_CODES.includes(code)),
      OUR_ADDITIONS
    )
  })

  it("lists each code once, in SCREAMING_SNAKE_CASE", () => {
    assert.strictEqual(new Set(ERROR_CODES).size, ERROR_CODES.length)
    for (const code of ERROR_CODES) assert.match(code, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/)
  })

  it("ships to pages the specs of codes the SDK raises, and to the extension those the extension raises too", async () => {
    const raisedBy = (...components: ReadonlyArray<string>) =>
      ERROR_CODES.filter((code) => ERROR_CATALOG[code].raisedBy.some((component) => components.includes(component)))
    const sorted = (codes: ReadonlyArray<string>) => [...codes].sort()
    assert.deepStrictEqual(sorted(Object.keys(PAGE_ERRORS)), sorted(raisedBy("sdk")))
    assert.deepStrictEqual(sorted(Object.keys(BROWSER_ERRORS)), sorted(raisedBy("sdk", "extension")))
    const page = await import("../src/catalog/browser.ts")
    assert.deepStrictEqual(sorted(Object.keys(page.CATALOG)), sorted(raisedBy("sdk")))
    const extension = await import("../src/catalog/extension.ts")
    assert.deepStrictEqual(sorted(Object.keys(extension.CATALOG)), sorted(raisedBy("sdk", "extension")))
  })

  describe.each(ERROR_CODES)("%s", (code) => {
    const spec = ERROR_CATALOG[code]

    it("has a message: non-empty, a full stop at the end, balanced placeholders", () => {
      assert.isNotEmpty(spec.message.trim())
      assert.match(spec.message, /\.$/)
      assert.notMatch(spec.message.replaceAll(/\{[A-Za-z][A-Za-z0-9]*\}/g, ""), /[{}]/)
    })

    it("says whether retrying can help and who raises it", () => {
      assert.isBoolean(spec.retryable)
      assert.isNotEmpty(spec.raisedBy)
      for (const component of spec.raisedBy) assert.include(COMPONENTS, component)
      assert.strictEqual(new Set(spec.raisedBy).size, spec.raisedBy.length)
    })

    it("fills every placeholder from details", () => {
      const details = Object.fromEntries(placeholdersOf(spec.message).map((name) => [name, `<${name}>`]))
      const error = PedelecError.fromCode(code, "core", { details })
      assert.notMatch(error.message, /\{[A-Za-z][A-Za-z0-9]*\}/)
      for (const value of Object.values(details)) assert.include(error.message, value)
    })

    it("never leaves a raw placeholder without details", () => {
      const error = PedelecError.fromCode(code, "core")
      assert.notMatch(error.message, /\{[A-Za-z][A-Za-z0-9]*\}/)
      assert.notInclude(error.message, "undefined")
      assert.strictEqual(error.details, undefined)
    })

    it("builds an error with the catalog's retryable and the given source", () => {
      const error = PedelecError.fromCode(code, "extension")
      assert.strictEqual(error.code, code)
      assert.strictEqual(error.retryable, spec.retryable)
      assert.strictEqual(error.source, "extension")
    })
  })
})

describe("PedelecError", () => {
  const timeout = PedelecError.fromCode("TOOL_TIMEOUT", "core", { details: { tool: "search", timeoutMs: 60_000 } })

  it("fills placeholders: strings as-is, other JSON as JSON", () => {
    assert.strictEqual(
      timeout.message,
      "Tool search did not answer within 60000 ms. Retry, or tell the user the page did not respond."
    )
    const args = PedelecError.fromCode("TOOL_ARGS_INVALID", "core", {
      details: { tool: "t", path: "/a", reason: ["x", 1] }
    })
    assert.include(args.message, 'at /a: ["x",1]')
  })

  it("reads a missing or null detail as a neutral phrase", () => {
    const noReason = PedelecError.fromCode("PROVIDER_FAILED", "provider", {
      details: { provider: "codex", reason: null }
    })
    assert.strictEqual(
      noReason.message,
      "codex failed: no reason was given. Retry the turn; the session is still usable."
    )
    assert.strictEqual(
      formatMessage("{tool} {provider} {sessionId} {limit}", {}),
      "the tool the provider (unknown) (limit unknown)"
    )
  })

  it("does not read placeholders from the prototype of details", () => {
    assert.strictEqual(formatMessage("{toString}", {}), "(toString unknown)")
  })

  it("does not double a full stop when a detail is written as a sentence", () => {
    assert.strictEqual(
      formatMessage("Unavailable: {reason}. Retry.", { reason: "It is off." }),
      "Unavailable: It is off. Retry."
    )
    assert.strictEqual(formatMessage("{reason} and more", { reason: "Ends here." }), "Ends here. and more")
  })

  it("keeps a message the raiser gives", () => {
    const error = PedelecError.fromCode("INVALID_INPUT", "sdk", { message: "Exact words.", details: { reason: "r" } })
    assert.strictEqual(error.message, "Exact words.")
    assert.deepStrictEqual(error.details, { reason: "r" })
  })

  it("is an Error with `_tag` PedelecError", () => {
    assert.instanceOf(timeout, Error)
    assert.instanceOf(timeout, PedelecError)
    assert.strictEqual(timeout._tag, "PedelecError")
    assert.isTrue(isPedelecError(timeout))
    assert.isFalse(isPedelecError(new Error("TOOL_TIMEOUT")))
    assert.isFalse(isPedelecError({ ...timeout.toWire(), _tag: "PedelecError" }))
  })

  it("hasCode narrows to the given codes", () => {
    const unknown: unknown = timeout
    assert.isTrue(hasCode(unknown, "TOOL_TIMEOUT"))
    assert.isTrue(hasCode(unknown, "TOOL_CANCELLED", "TOOL_TIMEOUT"))
    assert.isFalse(hasCode(unknown, "TOOL_CANCELLED"))
    assert.isFalse(hasCode(unknown))
    assert.isFalse(hasCode(timeout.toWire(), "TOOL_TIMEOUT"))
    assert.isFalse(hasCode(null, "TOOL_TIMEOUT"))
    if (hasCode(unknown, "TOOL_TIMEOUT", "TOOL_CANCELLED")) {
      const code: "TOOL_TIMEOUT" | "TOOL_CANCELLED" = unknown.code
      assert.strictEqual(code, "TOOL_TIMEOUT")
    }
  })

  it("toWire/fromWire round-trip, with and without details", () => {
    for (const error of [timeout, PedelecError.fromCode("UNAUTHORIZED", "core")]) {
      const wire = error.toWire()
      const keys = ["code", "message", ...(error.details === undefined ? [] : ["details"]), "retryable", "source"]
      assert.deepStrictEqual(Object.keys(wire), keys)
      assert.isTrue(Exit.isSuccess(Schema.decodeUnknownExit(PedelecErrorWireSchema)(wire, strict)))
      const back = PedelecError.fromWire(JSON.parse(JSON.stringify(wire)))
      assert.instanceOf(back, PedelecError)
      assert.deepStrictEqual(back.toWire(), wire)
    }
    assert.notProperty(PedelecError.fromCode("UNAUTHORIZED", "core").toWire(), "details")
  })

  it("decodes only known codes and components on the wire", () => {
    const wire: PedelecErrorWire = timeout.toWire()
    const decode = Schema.decodeUnknownExit(PedelecErrorWireSchema)
    assert.isTrue(Exit.isSuccess(decode(wire, strict)))
    for (const bad of [
      { ...wire, code: "THREAD_BUSY" },
      { ...wire, code: "tool_timeout" },
      { ...wire, source: "browser" },
      { ...wire, retryable: "true" },
      { ...wire, message: "x".repeat(8193) },
      { ...wire, stack: "Error: at …" }
    ]) {
      assert.isTrue(Exit.isFailure(decode(bad, strict)), JSON.stringify(bad).slice(0, 120))
    }
  })

  it("decodes the class from its encoded form and rejects an unknown code", () => {
    const decode = Schema.decodeUnknownExit(PedelecError)
    const decoded = decode({ _tag: "PedelecError", ...timeout.toWire() }, strict)
    assert.isTrue(Exit.isSuccess(decoded) && decoded.value instanceof PedelecError)
    assert.isTrue(Exit.isFailure(decode({ _tag: "PedelecError", ...timeout.toWire(), code: "NOPE" }, strict)))
  })
})
