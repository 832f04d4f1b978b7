/**
 * The page's side of `createSession` input checking: fast feedback before anything travels. Tools are checked one by
 * one with the contracts' argsSchema decoder (the pointer names the offending keyword, as Core's would); the rest with
 * `CreateSessionInput`. Core checks again and is the authority (it also compiles `pattern` with re2js, which the
 * SDK cannot afford). Inline handlers are split off here: they never leave the page.
 */
import { decodeArgsSchema } from "@pedelec/contracts/ArgsSchema"
import { issuesOfExit } from "@pedelec/contracts/JsonPointer"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { CreateSessionInput } from "@pedelec/contracts/Session"
import { ToolManifest } from "@pedelec/contracts/Tool"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { ToolDefinition, ToolHandler } from "./Tool.ts"

/** What `createSession(options)` takes; every field is optional. */
export interface CreateSessionOptions<Tools extends ReadonlyArray<ToolDefinition> = ReadonlyArray<ToolDefinition>> {
  /** A provider code from `listProviders()`; default: the user's default provider. */
  readonly provider?: string | undefined
  /** A model of that provider (needs `provider`); default: the user's default model for it. */
  readonly model?: string | undefined
  /** Which of the user's effort profiles to run; default: the settings' (`medium`). */
  readonly effortLevel?: "low" | "medium" | "high" | undefined
  /** An absolute, existing project directory: a second grant the user approves. Absent: a managed workspace. */
  readonly workspace?: { readonly path: string } | undefined
  /** Guidance the agent reads verbatim, and the tools it may call (made with `defineTool`). */
  readonly skills?: { readonly guidance: string; readonly tools: Tools } | undefined
  /** End the session 10 s after its last page disconnects (default `true`). */
  readonly autoEndOnDisconnect?: boolean | undefined
  /**
   * Also offer the tools to the browser's own agent through WebMCP (`document.modelContext`), for the session's life,
   * where the browser has it; nothing happens where it does not. Such calls run the page's handlers directly.
   */
  readonly webmcp?: boolean | undefined
}

export interface Prepared {
  readonly input: CreateSessionInput
  readonly inlineHandlers: ReadonlyMap<string, ToolHandler>
}

const decodeManifest = Schema.decodeUnknownExit(ToolManifest)
const decodeInput = Schema.decodeUnknownExit(CreateSessionInput)

const invalid = (code: "TOOLS_MANIFEST_INVALID" | "INVALID_INPUT", pointer: string, reason: string) =>
  PedelecError.fromCode(code, "sdk", { details: { pointer, reason } })

/** A property set to `undefined` is one not given, as a page's types allow (the wire has no `undefined`). */
const given = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T

/** Throws `TOOLS_MANIFEST_INVALID` or `INVALID_INPUT` with the JSON pointer of the problem. */
export const prepareInput = (options: CreateSessionOptions<ReadonlyArray<ToolDefinition>>): Prepared => {
  const inlineHandlers = new Map<string, ToolHandler>()
  const { skills, webmcp: _, ...rest } = given(options)
  let wire: Record<string, unknown> = rest
  if (skills !== undefined) {
    if (!Array.isArray(skills.tools)) throw invalid("TOOLS_MANIFEST_INVALID", "/skills/tools", "tools must be an array")
    const tools = skills.tools.map((tool: ToolDefinition, index) => {
      const at = `/skills/tools/${index}`
      if (typeof tool !== "object" || tool === null) throw invalid("TOOLS_MANIFEST_INVALID", at, "a tool is an object")
      const { handler, ...manifest } = given(tool)
      const args = decodeArgsSchema(manifest.argsSchema)
      if (Result.isFailure(args)) {
        throw invalid("TOOLS_MANIFEST_INVALID", `${at}/argsSchema${args.failure.pointer}`, args.failure.reason)
      }
      const decoded = decodeManifest(manifest, { onExcessProperty: "error" })
      if (Exit.isFailure(decoded)) {
        const issue = issuesOfExit(decoded)[0]
        throw invalid("TOOLS_MANIFEST_INVALID", `${at}${issue?.pointer ?? ""}`, issue?.reason ?? "invalid tool")
      }
      if (handler !== undefined) {
        if (typeof handler !== "function")
          throw invalid("TOOLS_MANIFEST_INVALID", `${at}/handler`, "must be a function")
        inlineHandlers.set(tool.name, (args, ctx) => handler.call(tool, args, ctx))
      }
      return decoded.value
    })
    wire = { ...rest, skills: { guidance: skills.guidance, tools } }
  }
  const decoded = decodeInput(wire, { onExcessProperty: "error" })
  if (Exit.isFailure(decoded)) {
    const issue = issuesOfExit(decoded)[0]
    const pointer = issue?.pointer ?? ""
    const code = pointer.startsWith("/skills") ? "TOOLS_MANIFEST_INVALID" : "INVALID_INPUT"
    throw invalid(code, pointer, issue?.reason ?? "invalid input")
  }
  return { input: decoded.value, inlineHandlers }
}
