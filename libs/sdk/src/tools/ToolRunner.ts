/**
 * ToolRunner — turns one handler run into the outcome the agent reads. A handler's return value must be plain JSON
 * of at most 4 MiB; a throw becomes `TOOL_HANDLER_ERROR` with the thrown object's own `code` as `appCode`. Nothing a
 * handler does reaches `onError`: tool results are the agent's business. Choosing the handler and submitting the
 * outcome belong to the session.
 */
import { MAX_JSON_DEPTH } from "@pedelec/contracts/JsonPointer"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { TOOL_LIMITS, type ToolOutcome } from "@pedelec/contracts/Tool"
import type { JsonValue, ToolCallContext } from "./Tool.ts"

type Run = (ctx: ToolCallContext) => unknown

const failed = (error: PedelecError): ToolOutcome => {
  const { code, message, details } = error
  return { ok: false, error: details === undefined ? { code, message } : { code, message, details } }
}

export const handlerNotFound = (tool: string): ToolOutcome =>
  failed(PedelecError.fromCode("TOOL_HANDLER_NOT_FOUND", "sdk", { details: { tool } }))

const handlerError = (tool: string, thrown: unknown): ToolOutcome => {
  const reason =
    thrown instanceof Error ? thrown.message : typeof thrown === "string" ? thrown : "it threw a non-Error value"
  const appCode =
    typeof thrown === "object" && thrown !== null && "code" in thrown && typeof thrown.code === "string"
      ? thrown.code
      : undefined
  return failed(
    PedelecError.fromCode("TOOL_HANDLER_ERROR", "sdk", {
      details: appCode === undefined ? { tool, reason } : { tool, reason, appCode }
    })
  )
}

const isPlainObject = (value: object): boolean => {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** Why `value` is not plain JSON (a function, a cycle, a BigInt, a class instance such as a DOM node), or undefined. */
export const notPlainJson = (value: unknown): string | undefined => {
  const onPath = new Set<object>()
  const visit = (node: unknown, depth: number, where: string): string | undefined => {
    if (node === null || typeof node === "string" || typeof node === "boolean") return undefined
    if (typeof node === "number") return Number.isFinite(node) ? undefined : `${where} is ${node}`
    if (typeof node !== "object") return `${where} is a ${typeof node}`
    if (depth > MAX_JSON_DEPTH) return `${where} is nested deeper than ${MAX_JSON_DEPTH} levels`
    if (onPath.has(node)) return `${where} refers back to itself`
    if (!Array.isArray(node) && !isPlainObject(node)) return `${where} is a ${node.constructor?.name ?? "class"} object`
    onPath.add(node)
    for (const [key, child] of Object.entries(node)) {
      // JSON.stringify drops undefined properties; an author returning `{ x: undefined }` means "no x".
      if (child === undefined && !Array.isArray(node)) continue
      const problem = visit(child, depth + 1, `${where}/${key}`)
      if (problem !== undefined) return problem
    }
    onPath.delete(node)
    return undefined
  }
  return visit(value, 0, "the result")
}

/** Checks a handler's value: plain JSON within the size limit, `undefined` meaning `null`. */
export const outcomeOf = (tool: string, value: unknown): ToolOutcome => {
  const result = value === undefined ? null : value
  const problem = notPlainJson(result)
  if (problem !== undefined) {
    return failed(PedelecError.fromCode("TOOL_RESULT_INVALID", "sdk", { details: { tool, reason: problem } }))
  }
  const json = JSON.stringify(result)
  // UTF-8 size without allocating: a UTF-16 unit is at most 3 bytes, so only long results need the exact count.
  const bytes = json.length * 3 <= TOOL_LIMITS.maxResultBytes ? json.length : new TextEncoder().encode(json).length
  if (bytes > TOOL_LIMITS.maxResultBytes) {
    return failed(
      PedelecError.fromCode("TOOL_RESULT_TOO_LARGE", "sdk", {
        details: { tool, bytes, limit: TOOL_LIMITS.maxResultBytes }
      })
    )
  }
  return { ok: true, result: JSON.parse(json) as JsonValue }
}

/** Runs a handler (sync or async) and never throws. */
export const runHandler = async (tool: string, run: Run, ctx: ToolCallContext): Promise<ToolOutcome> => {
  try {
    return outcomeOf(tool, await run(ctx))
  } catch (thrown) {
    return handlerError(tool, thrown)
  }
}
