/**
 * ArgsValidator/Worker — the messages between Core and a validation worker, and the worker's side of them: a check
 * request (the tool's argsSchema as JSON text, the arguments) answered by the first issue or ok, with each schema's
 * validator built once and kept (the most recent 64). Pure: no thread, no timer. Spawning workers, the time budget
 * and terminating a worker that overruns it are Core's (libs/core ToolRouter/Validation).
 *
 * The schema travels as text because a string is copied to the worker far faster than a structured clone of the
 * document, and the text is also the cache key.
 */
import * as Result from "effect/Result"
import type { ArgsSchema } from "../../ArgsSchema.ts"
import { type ArgsIssue, type ArgsValidator, makeArgsValidator } from "../ArgsValidator.ts"

export interface CheckRequest {
  readonly id: number
  /** JSON text of an argsSchema Core has already decoded and compiled. */
  readonly schema: string
  readonly args: unknown
}

export type CheckReply =
  | { readonly id: number; readonly ok: true }
  | { readonly id: number; readonly ok: false; readonly issues: ReadonlyArray<ArgsIssue> }

const CACHE_SIZE = 64

/** The worker's handler: one reply per request, never a throw for bad arguments. */
export const makeChecker = (): ((request: CheckRequest) => CheckReply) => {
  const cache = new Map<string, ArgsValidator>()
  const validatorFor = (schema: string): Result.Result<ArgsValidator, ArgsIssue> => {
    const cached = cache.get(schema)
    if (cached !== undefined) {
      // Re-inserted so the map's order is least recently used first.
      cache.delete(schema)
      cache.set(schema, cached)
      return Result.succeed(cached)
    }
    const built = makeArgsValidator(JSON.parse(schema) as ArgsSchema)
    if (Result.isFailure(built)) return Result.fail({ path: "", reason: built.failure.reason })
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string)
    cache.set(schema, built.success)
    return Result.succeed(built.success)
  }
  return ({ id, schema, args }) => {
    const validator = validatorFor(schema)
    if (Result.isFailure(validator)) return { id, ok: false, issues: [validator.failure] }
    const checked = validator.success.validate(args)
    return Result.isSuccess(checked) ? { id, ok: true } : { id, ok: false, issues: checked.failure.slice(0, 8) }
  }
}
