/**
 * ToolRouter/Validation — checking an agent's tool-call arguments against the tool's argsSchema without blocking
 * Core's event loop, which serves every page and session: the arguments' size and nesting on the loop (one cheap
 * pass, before anything is copied), then the check in a small pool of `node:worker_threads` workers (each the
 * bundled ArgsValidator, built into `args-worker.cjs`: see `workerFile`) under a time budget. A check that overruns it, runs its worker out of
 * memory or is abandoned terminates that worker, and the pool starts a new one; the pool lives in the layer's scope
 * (Core's) and its workers are terminated when it closes. Every refusal is `TOOL_ARGS_INVALID` with the pointer, the
 * reason and, for a budget, `details.limit`. What the schema allows is contracts' (ArgsValidator, its Budget);
 * routing calls is ToolRouter's.
 *
 * Measured on 2 shared cores: a warm worker's round trip for a small call is 0.12–0.14 ms at p50 and 1–5 ms at p99
 * (load ~23; an echo worker: 0.04 / 0.6 ms), so ordinary calls are not noticeably slower; a worker takes 250–400 ms
 * to start, hence both start at the first check that needs one and stay. Calls with a simple schema (no `pattern`,
 * no `oneOf`) and at most FAST_PATH_BYTES of arguments (by checkArgsShape's estimate) are still checked on the loop,
 * at a bounded cost (linear in those bytes: 0.5 ms p50, 9 ms p99 with GC, measured at the cap): an in-process caller
 * on TestClock then sees the call queued at once, and a worker's p99 is no better.
 */

import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import type { ArgsIssue } from "@pedelec/contracts/node/ArgsValidator"
import {
  ARGS_BUDGET,
  checkArgsShape,
  isSimpleSchema,
  overMemory,
  overTime
} from "@pedelec/contracts/node/ArgsValidator/Budget"
import type { CheckReply, CheckRequest } from "@pedelec/contracts/node/ArgsValidator/Worker"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Pool from "effect/Pool"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { Tool } from "../ToolCatalog.ts"

/** Arguments this small against a simple schema are checked on the loop (see the header). */
export const FAST_PATH_BYTES = 1024

export interface ValidationOptions {
  readonly workers: number
  /** Wall time one check may take in its worker. */
  readonly timeMs: number
  /** Old-generation heap of each worker: a check that needs more ends that worker, never Core. */
  readonly workerHeapMb: number
}

const DEFAULTS: ValidationOptions = { workers: 2, timeMs: ARGS_BUDGET.timeMs, workerHeapMb: 256 }

type Ended = { readonly _tag: "exited" }

/**
 * The built worker: beside pedelec-core's bundle (core-daemon's build copies it there), else libs/core's own build
 * output when Core runs from source (tests). Missing is a build problem, said as one.
 */
const workerFile = (): string => {
  const candidates = [
    fileURLToPath(new URL("./args-worker.cjs", import.meta.url)),
    fileURLToPath(new URL("../../dist/args-worker.cjs", import.meta.url))
  ]
  const found = candidates.find((file) => existsSync(file))
  if (found === undefined)
    throw new Error(`args-worker.cjs is not built (looked in ${candidates.join(", ")}): run npx nx run core:build`)
  return found
}

const spawn = (heapMb: number) =>
  Effect.acquireRelease(
    Effect.sync(() => new Worker(workerFile(), { resourceLimits: { maxOldGenerationSizeMb: heapMb } })),
    (worker) => Effect.promise(() => worker.terminate())
  )

let nextId = 0

/** Sends one request and waits for its reply, or for the worker's end (out of memory, a crash). */
const ask = (worker: Worker, request: Omit<CheckRequest, "id">) =>
  Effect.callback<CheckReply | Ended>((resume) => {
    const id = ++nextId
    const onMessage = (reply: CheckReply) => {
      // A reply to an abandoned request (its worker is being replaced) is not this one's.
      if (reply.id === id) resume(Effect.succeed(reply))
    }
    const onEnd = () => resume(Effect.succeed({ _tag: "exited" } as const))
    worker.on("message", onMessage)
    worker.once("error", onEnd)
    worker.once("exit", onEnd)
    worker.postMessage({ id, ...request } satisfies CheckRequest)
    return Effect.sync(() => {
      worker.off("message", onMessage)
      worker.off("error", onEnd)
      worker.off("exit", onEnd)
    })
  })

/** The schema's JSON text, made once per tool: it is the worker's cache key. */
const schemaTexts = new WeakMap<Tool, string>()
const schemaText = (tool: Tool) => {
  let text = schemaTexts.get(tool)
  if (text === undefined) {
    text = JSON.stringify(tool.spec.argsSchema)
    schemaTexts.set(tool, text)
  }
  return text
}

const inWorker = (pool: Pool.Pool<Worker>, options: ValidationOptions, tool: Tool, args: Schema.Json) =>
  Effect.scoped(
    Effect.gen(function* () {
      const worker = yield* Pool.get(pool)
      const replaced = Pool.invalidate(pool, worker)
      const reply = yield* ask(worker, { schema: schemaText(tool), args }).pipe(
        Effect.timeoutOption(options.timeMs),
        Effect.onInterrupt(() => replaced)
      )
      if (Option.isNone(reply)) return yield* Effect.as(replaced, [overTime(options.timeMs)])
      if ("_tag" in reply.value) return yield* Effect.as(replaced, [overMemory])
      return reply.value.ok ? [] : reply.value.issues
    })
  )

const refuse = (tool: Tool, issues: ReadonlyArray<ArgsIssue>) => {
  const [first] = issues
  return Effect.fail(
    PedelecError.fromCode("TOOL_ARGS_INVALID", "core", {
      details: {
        tool: tool.spec.name,
        path: first?.path ?? "",
        reason: first?.reason ?? "",
        ...(first?.limit === undefined ? {} : { limit: first.limit }),
        issues: issues.slice(0, 8).map(({ path, reason }) => ({ path, reason }))
      }
    })
  )
}

const check = Effect.fnUntraced(function* (
  pool: Effect.Effect<Pool.Pool<Worker>>,
  options: ValidationOptions,
  tool: Tool,
  args: Schema.Json
) {
  const shape = checkArgsShape(args)
  if (Result.isFailure(shape)) return yield* refuse(tool, [shape.failure])
  if (shape.success <= FAST_PATH_BYTES && isSimpleSchema(tool.spec.argsSchema)) {
    const checked = tool.validator.validate(args)
    return Result.isSuccess(checked) ? undefined : yield* refuse(tool, checked.failure)
  }
  const issues = yield* inWorker(yield* pool, options, tool, args)
  if (issues.length > 0) return yield* refuse(tool, issues)
})

export class ArgsValidation extends Context.Service<
  ArgsValidation,
  {
    /** Succeeds when `args` fit the tool's argsSchema and the budget; else `TOOL_ARGS_INVALID`. */
    readonly check: (tool: Tool, args: Schema.Json) => Effect.Effect<void, PedelecError>
  }
>()("pedelec/core/ArgsValidation") {
  static readonly layerWith = (overrides: Partial<ValidationOptions> = {}) =>
    Layer.effect(
      ArgsValidation,
      Effect.gen(function* () {
        const options = { ...DEFAULTS, ...overrides }
        // Both workers start at the first check that needs one (a worker takes 250–400 ms to start under load), then
        // stay for Core's life: a Core whose tools all take the fast path never starts one.
        const pool = yield* Effect.cached(
          Scope.provide(yield* Effect.scope)(Pool.make({ acquire: spawn(options.workerHeapMb), size: options.workers }))
        )
        return ArgsValidation.of({
          check: Effect.fn("ArgsValidation.check")((tool, args) => check(pool, options, tool, args))
        })
      })
    )

  static readonly layer = ArgsValidation.layerWith()
}
