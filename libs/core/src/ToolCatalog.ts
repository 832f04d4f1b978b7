/**
 * ToolCatalog — one session's tools as Core keeps them: each manifest entry compiled into its spec and argument
 * validator (a `pattern` re2js cannot compile is `TOOLS_MANIFEST_INVALID` with its pointer; descriptions and titles
 * with only their visible characters, Untrusted), the per-tool spec files under `.pedelec-runtime/skills/`, and the
 * line an agent gets for an outcome (a large result as a file; the result's bytes as the page sent them).
 * Routing calls is ToolRouter's.
 */
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import type { ToolCallId } from "@pedelec/contracts/Ids"
import type { ToolSpec, ToolSummary } from "@pedelec/contracts/node/AgentLink"
import { type ArgsValidator, makeArgsValidator } from "@pedelec/contracts/node/ArgsValidator"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { type Skills, TOOL_LIMITS, type ToolAnnotations, type ToolOutcome } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { visibleText } from "./Untrusted.ts"

export interface Tool {
  readonly spec: ToolSpec
  readonly validator: ArgsValidator
}

/** The title an agent reads, without the characters a person reviewing it would not see (Untrusted). */
const visibleAnnotations = (annotations: ToolAnnotations): ToolAnnotations =>
  annotations.title === undefined ? annotations : { ...annotations, title: visibleText(annotations.title) }

/** Validates every tool's argsSchema beyond its shape (patterns compile under re2js) and builds the tool table. */
export const compileTools = (skills: Skills | undefined): Result.Result<ReadonlyMap<string, Tool>, PedelecError> => {
  const tools = new Map<string, Tool>()
  for (const [index, manifest] of (skills?.tools ?? []).entries()) {
    const validator = makeArgsValidator(manifest.argsSchema)
    if (Result.isFailure(validator)) {
      const pointer = `/skills/tools/${index}/argsSchema${validator.failure.pointer}`
      return Result.fail(
        PedelecError.fromCode("TOOLS_MANIFEST_INVALID", "core", {
          details: { pointer, reason: validator.failure.reason }
        })
      )
    }
    const spec: ToolSpec = {
      name: manifest.name,
      description: visibleText(manifest.description),
      timeoutMs: manifest.timeoutMs ?? TOOL_LIMITS.defaultTimeoutMs,
      argsSchema: manifest.argsSchema,
      ...(manifest.annotations ? { annotations: visibleAnnotations(manifest.annotations) } : {})
    }
    tools.set(manifest.name, { spec, validator: validator.success })
  }
  return Result.succeed(tools)
}

export const summaryOf = ({ spec }: Tool): ToolSummary => {
  const { argsSchema: _, ...summary } = spec
  return summary
}

export const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value))

const runtimeDir = (workspace: string, ...parts: ReadonlyArray<string>) =>
  path.join(workspace, ".pedelec-runtime", ...parts)

/** Per-tool spec files: never needed by the normal flow, there for agents that browse their workspace. */
export const writeSpecFiles = (workspace: string, tools: ReadonlyMap<string, Tool>) =>
  Effect.promise(async () => {
    const dir = runtimeDir(workspace, "skills")
    await mkdir(dir, { recursive: true })
    for (const { spec } of tools.values()) {
      await writeFile(path.join(dir, `${spec.name}.json`), `${JSON.stringify(spec, null, 2)}\n`)
    }
  })

/** The line pedelec-cli prints for an outcome; over 32 KiB the result goes to a file, as agent shells truncate. */
export const agentLine = (workspace: string, toolCallId: ToolCallId, outcome: ToolOutcome) =>
  Effect.gen(function* () {
    if (!outcome.ok) return { ok: false as const, error: outcome.error } satisfies CliOutput
    const text = JSON.stringify(outcome.result)
    const bytes = Buffer.byteLength(text)
    if (bytes <= TOOL_LIMITS.inlineResultBytes) return { ok: true as const, result: outcome.result } satisfies CliOutput
    const resultFile = runtimeDir(workspace, "tmp", `${toolCallId}.json`)
    yield* Effect.promise(async () => {
      await mkdir(path.dirname(resultFile), { recursive: true })
      await writeFile(resultFile, text)
    })
    return { ok: true as const, resultFile, bytes, preview: text.slice(0, 512) } satisfies CliOutput
  })
