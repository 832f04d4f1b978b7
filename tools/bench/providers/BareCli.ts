// The bare floor of the provider bench: one agent CLI turn spawned by hand with exactly the argv, environment and
// stdin its adapter builds (the adapters' own exported builders, so the two cannot drift), timed from spawn to its
// first stdout line, its first text, its completion line and its exit. Its lines go through the adapter's own decoder
// only to know which line is text or completion, and which id resumes the conversation; no Core, no RPC, no events.
import { spawn } from "node:child_process"
import { writeFile } from "node:fs/promises"
import path from "node:path"
import { createInterface } from "node:readline"
import type { SessionId } from "@pedelec/contracts/Ids"
import { DEFAULT_EFFORT_LEVEL } from "@pedelec/contracts/Provider"
import { ClaudeAdapter, claudeArgs, claudeEnv, claudeUserMessage } from "@pedelec/providers/claude/ClaudeAdapter"
import { ClaudeTurnDecoder } from "@pedelec/providers/claude/ClaudeEvents"
import { CodexAdapter, codexExecArgs } from "@pedelec/providers/codex/CodexAdapter"
import { CodexTurnDecoder } from "@pedelec/providers/codex/CodexEvents"
import { GEMINI_POLICY, GeminiAdapter, geminiArgs, geminiEnv } from "@pedelec/providers/gemini/GeminiAdapter"
import { GeminiTurnDecoder } from "@pedelec/providers/gemini/GeminiEvents"
import { OpencodeAdapter, opencodeArgs, opencodeEnv } from "@pedelec/providers/opencode/OpencodeAdapter"
import { OpencodeTurnDecoder } from "@pedelec/providers/opencode/OpencodeEvents"
import type { ProviderAdapter, SessionProcessOptions, TurnInput } from "@pedelec/providers/Provider"
import type { TurnDecoder } from "@pedelec/providers/TurnProcess"

interface Invocation {
  readonly args: ReadonlyArray<string>
  /** On top of this process's environment, as the adapters spawn with `inheritEnv`. */
  readonly env: Readonly<Record<string, string>>
  /** Written to stdin, which is then closed: the run is one turn. */
  readonly stdin: string
}

interface BareSpec {
  readonly adapter: ProviderAdapter
  /** `dir` is the bare session's own folder, for what the adapter keeps per session (gemini's policy file). */
  readonly invocation: (session: SessionProcessOptions, turn: TurnInput, dir: string) => Promise<Invocation>
  readonly decoder: () => TurnDecoder
}

const BARE: Readonly<Record<"claude" | "codex" | "gemini" | "opencode", BareSpec>> = {
  claude: {
    adapter: ClaudeAdapter,
    // Its turns are stream-json messages on stdin; a single one and EOF make a one-turn run.
    invocation: async (session, turn) => ({
      args: claudeArgs(session, turn),
      env: claudeEnv(session),
      stdin: `${claudeUserMessage(turn.prompt)}\n`
    }),
    decoder: () => new ClaudeTurnDecoder()
  },
  codex: {
    adapter: CodexAdapter,
    // codex exec, one process a turn (Pedelec keeps app-server warm); the environment as CodexAdapter spawns with.
    invocation: async (session, turn) => ({ args: codexExecArgs(session, turn), env: session.env, stdin: turn.prompt }),
    decoder: () => new CodexTurnDecoder()
  },
  gemini: {
    adapter: GeminiAdapter,
    invocation: async (session, turn, dir) => {
      const policyFile = path.join(dir, "pedelec-least-privilege.toml")
      await writeFile(policyFile, GEMINI_POLICY, { mode: 0o600 })
      return { args: geminiArgs(session, turn, policyFile), env: geminiEnv(session), stdin: turn.prompt }
    },
    decoder: () => new GeminiTurnDecoder()
  },
  opencode: {
    adapter: OpencodeAdapter,
    invocation: async (session, turn) => ({
      args: opencodeArgs(session, turn),
      env: opencodeEnv(session),
      stdin: turn.prompt
    }),
    decoder: () => new OpencodeTurnDecoder()
  }
}

export type BareCode = keyof typeof BARE

/** Milliseconds from spawn; `firstText` and `completed` are the first decoded text event and completion line. */
export interface BareRun {
  readonly firstLine: number
  readonly firstText: number
  readonly completed: number
  readonly exit: number
  /** The latest id the CLI reported, which the next turn resumes (as Core records it). */
  readonly providerSessionId: string | undefined
}

/** What Core would start the session process with on a fresh home: default settings, least privilege. */
export const bareSession = (
  code: BareCode,
  options: { sessionId: SessionId; workspace: string; env: Record<string, string>; model: string | undefined }
): SessionProcessOptions => ({
  ...options,
  effort: BARE[code].adapter.defaultEffort[DEFAULT_EFFORT_LEVEL],
  fullAccess: false
})

/** Runs one turn of the bare CLI; fails with its stderr if it ends without completing. */
export const runBare = async (
  code: BareCode,
  command: string,
  session: SessionProcessOptions,
  turn: TurnInput,
  dir: string,
  timeoutMs: number
): Promise<BareRun> => {
  const spec = BARE[code]
  const { args, env, stdin } = await spec.invocation(session, turn, dir)
  const decoder = spec.decoder()
  const started = performance.now()
  // Its own process group, as AgentProcess does, so a timeout takes the CLI's children with it.
  const child = spawn(command, [...args], {
    cwd: session.workspace,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true
  })
  child.stdin.end(stdin)
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000)
  })
  const marks = { firstLine: Number.NaN, firstText: Number.NaN, completed: Number.NaN }
  let providerSessionId: string | undefined
  let failure: string | undefined
  createInterface({ input: child.stdout }).on("line", (text) => {
    const at = performance.now() - started
    if (Number.isNaN(marks.firstLine)) marks.firstLine = at
    for (const event of decoder.decode({ _tag: "Text", text })) {
      if (event.type === "session") providerSessionId = event.providerSessionId
      if ((event.type === "delta" || event.type === "message") && Number.isNaN(marks.firstText)) marks.firstText = at
      if (event.type === "completed" && Number.isNaN(marks.completed)) marks.completed = at
      if (event.type === "error") failure ??= `${event.code}: ${event.message}`
    }
  })
  let exit = Number.NaN
  child.once("exit", () => {
    exit = performance.now() - started
  })
  const timer = setTimeout(() => {
    failure ??= `no completion within ${timeoutMs} ms`
    process.kill(-child.pid!, "SIGKILL")
  }, timeoutMs)
  // "close" comes after the last stdout line was read, which may be after the exit.
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject)
    child.once("close", (exitCode) => resolve(exitCode))
  }).finally(() => clearTimeout(timer))
  if (failure !== undefined || Number.isNaN(marks.completed) || Number.isNaN(marks.firstText)) {
    const why = failure ?? `no ${Number.isNaN(marks.completed) ? "completion" : "text"} line`
    throw new Error(`bare ${code} (exit ${exitCode}, ${exit.toFixed(0)} ms): ${why}; stderr: ${stderr || "(empty)"}`)
  }
  return { ...marks, exit, providerSessionId }
}
