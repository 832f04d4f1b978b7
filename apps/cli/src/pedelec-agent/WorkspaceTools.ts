/**
 * WorkspaceTools — the tools pedelec-agent offers beside the page's: list, read and write files of the session's
 * workspace, and run a workspace script through pedelec-deno. Every path goes through path-guard's `resolveInside`
 * (relative, no `..`, its real path inside the workspace, no dangling link on the way); this module words the
 * refusals. It does not talk to Core (PageTools) or the model (Loop); answers are the same JSON lines pedelec-cli
 * prints.
 */
import { spawn } from "node:child_process"
import { constants } from "node:fs"
import { access, mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises"
import path from "node:path"
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import { AGENT_LOOP_TOOLS } from "@pedelec/contracts/node/AgentLoop"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { type Refusal, resolveInside as resolveReal } from "@pedelec/path-guard/RealPath"
import { errnoOf } from "../Reach.ts"
import type { FunctionTool } from "./Ollama.ts"

/** The codes pedelec-deno refuses a run with. */
const DENO_CODES = new Set<string>([
  "DENO_UNAVAILABLE",
  "SCRIPT_PATH_INVALID",
  "SCRIPT_IMPORT_DENIED",
  "SCRIPT_TIMEOUT",
  "SCRIPT_FAILED",
  "UNAUTHORIZED",
  "CORE_RUNTIME_UNAVAILABLE"
])

export const LIMITS = {
  readBytes: 256 * 1024,
  writeBytes: 4 * 1024 * 1024,
  listEntries: 1_000,
  scriptOutputBytes: 64 * 1024
} as const

/** What a tool gives the model: pedelec-cli's line shape, so every tool answers alike. */
export type ToolAnswer =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: { readonly code: ErrorCode; readonly message: string } }

const fail = (code: ErrorCode, details: Record<string, string | number>): ToolAnswer => ({
  ok: false,
  error: { code, message: PedelecError.fromCode(code, "provider", { details }).message }
})

class PathRefused extends Error {}

/** Why a path is refused, as the model reads it. */
const REFUSALS: Record<Refusal, string> = {
  nul: "it contains a NUL byte",
  absolute: "it is absolute; use a path relative to the workspace",
  climbs: "it uses `..`",
  outside: "a symlink along it leads outside the workspace",
  // A later write would follow it.
  dangling: "it goes through a symlink that points nowhere"
}

/** The real path of `relative` in the workspace (where it will be, if it does not exist yet), or why not. */
export const resolveInside = async (workspace: string, relative: string): Promise<string> => {
  const resolved = await resolveReal(workspace, relative)
  if (resolved._tag === "Refused") throw new PathRefused(REFUSALS[resolved.refusal])
  return resolved.path
}

const guarded = async (relative: unknown, run: (relative: string) => Promise<ToolAnswer>): Promise<ToolAnswer> => {
  if (typeof relative !== "string") return fail("INVALID_INPUT", { reason: "`path` must be a string" })
  try {
    return await run(relative)
  } catch (error) {
    if (error instanceof PathRefused)
      return fail("INVALID_INPUT", { reason: `path ${JSON.stringify(relative)} cannot be used: ${error.message}` })
    const code = errnoOf(error)
    const reason = code === "ENOENT" ? "it does not exist" : code === "EISDIR" ? "it is a directory" : String(error)
    return fail("INVALID_INPUT", { reason: `${JSON.stringify(relative)}: ${reason}` })
  }
}

const list = (workspace: string, args: Record<string, unknown>) =>
  guarded(args.path ?? ".", async (relative) => {
    const dir = await resolveInside(workspace, relative)
    const entries = await readdir(dir, { withFileTypes: true, recursive: args.recursive === true })
    const shown = entries.slice(0, LIMITS.listEntries).map((entry) => {
      const name = path.relative(dir, path.join(entry.parentPath, entry.name))
      return entry.isDirectory() ? `${name}/` : entry.isSymbolicLink() ? `${name}@` : name
    })
    return { ok: true, result: { entries: shown.sort(), truncated: entries.length > LIMITS.listEntries } }
  })

const read = (workspace: string, args: Record<string, unknown>) =>
  guarded(args.path, async (relative) => {
    const bytes = await readFile(await resolveInside(workspace, relative))
    const offset = Number.isInteger(args.offset) ? Math.max(0, args.offset as number) : 0
    const slice = bytes.subarray(offset, offset + LIMITS.readBytes)
    const rest = bytes.length - offset - slice.length
    return {
      ok: true,
      result: { text: slice.toString("utf8"), bytes: bytes.length, ...(rest > 0 ? { more: rest } : {}) }
    }
  })

const write = (workspace: string, args: Record<string, unknown>) =>
  guarded(args.path, async (relative) => {
    if (typeof args.content !== "string") return fail("INVALID_INPUT", { reason: "`content` must be a string" })
    if (Buffer.byteLength(args.content) > LIMITS.writeBytes)
      return fail("INVALID_INPUT", { reason: `content over ${LIMITS.writeBytes} bytes` })
    const target = await resolveInside(workspace, relative)
    await mkdir(path.dirname(target), { recursive: true })
    // Checked again once the folders exist: one of them may have been swapped for a symlink meanwhile.
    const checked = await resolveInside(workspace, relative)
    const temp = `${checked}.${process.pid}.tmp`
    await writeFile(temp, args.content, { flag: "wx" })
    await rename(temp, checked)
    return { ok: true, result: { path: relative, bytes: Buffer.byteLength(args.content) } }
  })

const findOnPath = async (command: string, env: NodeJS.ProcessEnv) => {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue
    const candidate = path.join(dir, command)
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false
      )
    )
      return candidate
  }
  return undefined
}

const capped = (chunks: Array<Buffer>) => {
  const all = Buffer.concat(chunks)
  return all.length <= LIMITS.scriptOutputBytes
    ? all.toString("utf8")
    : `${all.subarray(0, LIMITS.scriptOutputBytes).toString("utf8")}\n[cut: ${all.length} bytes in all]`
}

/** pedelec-deno, never another runtime: without it the model is told to report that, as SPEC §9 says. */
const runScript = async (args: Record<string, unknown>, threadId: string, signal: AbortSignal): Promise<ToolAnswer> => {
  if (typeof args.script !== "string") return fail("INVALID_INPUT", { reason: "`script` must be a string" })
  const extra = Array.isArray(args.args) ? args.args.map(String) : []
  const deno = await findOnPath("pedelec-deno", process.env)
  if (deno === undefined) return fail("DENO_UNAVAILABLE", {})
  const child = spawn(deno, ["--thread-id", threadId, "run", args.script, "--", ...extra], {
    stdio: ["ignore", "pipe", "pipe"],
    signal
  })
  const stdout: Array<Buffer> = []
  const stderr: Array<Buffer> = []
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk))
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk))
  const exitCode = await new Promise<number | null>((resolve) => {
    child.once("error", () => resolve(null))
    child.once("close", (code) => resolve(code))
  })
  const own = exitCode === 0 ? undefined : ownFailure(Buffer.concat(stdout).toString("utf8"))
  return own ?? { ok: true, result: { exitCode, stdout: capped(stdout), stderr: capped(stderr) } }
}

/** pedelec-deno's own refusal (a bad path, a denied import, the timeout) is its one JSON line, not script output. */
const ownFailure = (stdout: string): ToolAnswer | undefined => {
  const lines = stdout.trimEnd().split("\n")
  if (lines.length !== 1) return undefined
  try {
    const line = JSON.parse(lines[0]!) as { ok?: unknown; error?: { code?: unknown; message?: unknown } }
    const { code, message } = line.error ?? {}
    return line.ok === false && typeof code === "string" && DENO_CODES.has(code) && typeof message === "string"
      ? { ok: false, error: { code: code as ErrorCode, message } }
      : undefined
  } catch {
    return undefined
  }
}

export const workspaceTools: ReadonlyArray<FunctionTool> = [
  {
    type: "function",
    function: {
      name: AGENT_LOOP_TOOLS.list,
      description: "Lists files of the workspace (folders end in /). Paths are relative to the workspace.",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string", description: "A folder; default the workspace" },
          recursive: { type: "boolean" }
        }
      }
    }
  },
  {
    type: "function",
    function: {
      name: AGENT_LOOP_TOOLS.read,
      description: `Reads a workspace file as UTF-8 text, up to ${LIMITS.readBytes} bytes from \`offset\`.`,
      parameters: {
        type: "object",
        properties: { path: { type: "string" }, offset: { type: "integer", minimum: 0 } },
        required: ["path"]
      }
    }
  },
  {
    type: "function",
    function: {
      name: AGENT_LOOP_TOOLS.write,
      description: "Writes (creates or replaces) a workspace file with the given text; folders are created.",
      parameters: {
        type: "object",
        properties: { path: { type: "string" }, content: { type: "string" } },
        required: ["path", "content"]
      }
    }
  },
  {
    type: "function",
    function: {
      name: AGENT_LOOP_TOOLS.deno,
      description:
        "Runs a JavaScript/TypeScript file of the workspace with pedelec-deno (no network, no environment, files of the workspace only) and returns its exit code and output.",
      parameters: {
        type: "object",
        properties: { script: { type: "string" }, args: { type: "array", items: { type: "string" } } },
        required: ["script"]
      }
    }
  }
]

/** Runs a built-in tool; undefined when `name` is not one. */
export const runWorkspaceTool = (
  name: string,
  args: Record<string, unknown>,
  context: { readonly workspace: string; readonly threadId: string; readonly signal: AbortSignal }
): Promise<ToolAnswer> | undefined => {
  switch (name) {
    case AGENT_LOOP_TOOLS.list:
      return list(context.workspace, args)
    case AGENT_LOOP_TOOLS.read:
      return read(context.workspace, args)
    case AGENT_LOOP_TOOLS.write:
      return write(context.workspace, args)
    case AGENT_LOOP_TOOLS.deno:
      return runScript(args, context.threadId, context.signal)
    default:
      return undefined
  }
}
