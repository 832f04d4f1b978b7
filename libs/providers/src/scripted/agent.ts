/**
 * The scripted test agent: a real executable (bundled to dist/scripted-agent.mjs) that Core drives like any agent
 * CLI. It reads the prompt from stdin, runs the commands of its ```pedelec-script block and prints one JSON event per
 * line. It owns nothing but its per-session memory file; it reaches Core only through a real `pedelec-cli` on PATH.
 * Decoding its output is ScriptedAdapter's job.
 *
 * Commands: `say <text>`, `delta <text>` (consecutive deltas also make one message), `stamp` (a delta of
 * `@<Date.now()> `, the emit time, so a bench can time a delta from the agent on), `call <tool> <json>`,
 * `cli <args…>`, `sleep <ms>`, `crash <code>`, `hang` (ignores SIGINT/SIGTERM), `garbage`, `grandchild` (setsid,
 * pid to $SCRIPTED_PID_FILE), `escape` (a setsid sleep whose parent shell exits at once, so only its environment
 * links it to the agent; pid to $SCRIPTED_PID_FILE), `error <CODE> <message>`, `remember <text>`, `recall`,
 * `read <path>` and `write <path> <text>` (workspace files, e.g. assets). Output: `session` first, then
 * `delta` / `message` / `tool` / `error`, and `done` last. Options: `--resume <id>`, `--version`.
 */
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import {
  echoText,
  extractScript,
  parseCommand,
  SCRIPTED_AGENT_VERSION,
  SESSION_ID_PATTERN,
  splitFirst,
  splitWords
} from "./Script.ts"

type Event =
  | { readonly type: "session"; readonly id: string }
  | { readonly type: "delta" | "message"; readonly text: string }
  | { readonly type: "tool"; readonly name: string; readonly detail: string }
  | { readonly type: "pid"; readonly pid: number }
  | { readonly type: "error"; readonly code: string; readonly message: string }
  | { readonly type: "done" }

const write = (stream: NodeJS.WriteStream, data: string | Uint8Array) =>
  new Promise<void>((resolve) => stream.write(data, () => resolve()))

const emit = (event: Event) => write(process.stdout, `${JSON.stringify(event)}\n`)

/** Exits only once what was written has left the process. */
const exit = async (code: number): Promise<never> => {
  await write(process.stdout, "")
  process.exit(code)
}

const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

const stateFile = (sessionId: string) =>
  path.join(
    process.env.SCRIPTED_STATE_DIR ?? path.join(process.cwd(), ".pedelec-runtime", "scripted"),
    `${sessionId}.json`
  )

const readMemory = (sessionId: string): Array<string> => {
  try {
    const parsed: unknown = JSON.parse(readFileSync(stateFile(sessionId), "utf8"))
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === "string") : []
  } catch {
    return []
  }
}

const writeMemory = (sessionId: string, items: ReadonlyArray<string>) => {
  const file = stateFile(sessionId)
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(items))
}

/** Runs pedelec-cli from PATH as a real child and reports its first stdout line and exit code. */
const runCli = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number; readonly line: string }>((resolve) => {
    const child = spawn("pedelec-cli", [...args], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (data: string) => {
      out += data
    })
    child.on("error", (error) => resolve({ code: 127, line: `pedelec-cli could not run: ${error.message}` }))
    child.on("close", (code, signal) => {
      const line = out.split("\n")[0] ?? ""
      resolve({ code: code ?? 128, line: line === "" && signal !== null ? `(killed by ${signal})` : line })
    })
  })

/** A detached child that calls setsid (node does so for `detached`), leaves our group and sleeps forever. */
const spawnGrandchild = async () => {
  const code =
    'const f=process.env.SCRIPTED_PID_FILE;if(f)require("node:fs").writeFileSync(f,String(process.pid));setInterval(()=>{},1e9)'
  const child = spawn(process.execPath, ["-e", code], { detached: true, stdio: "ignore" })
  child.unref()
  if (process.env.SCRIPTED_PID_FILE === undefined && child.pid !== undefined) {
    await emit({ type: "pid", pid: child.pid })
  }
}

const escapeTheTree = () =>
  new Promise<void>((resolve, reject) => {
    // sh backgrounds setsid, which (no group leader) execs sleep in a session of its own; sh is gone within a
    // millisecond, long before a look at the process table could see the sleep's parent.
    const pidFile = process.env.SCRIPTED_PID_FILE ?? "/dev/null"
    const detach = 'setsid sleep 100000 </dev/null >/dev/null 2>&1 & echo $! > "$1"'
    spawn("sh", ["-c", detach, "sh", pidFile], { stdio: "ignore" })
      .on("exit", () => resolve())
      .on("error", reject)
  })

const garbage = async () => {
  await write(process.stdout, "this line is not JSON\n")
  await write(process.stdout, `${"x".repeat(100 * 1024)}\n`)
  await write(process.stdout, '{"type":"mystery","detail":"an event type nobody knows"}\n')
  await write(process.stdout, '{"type":"message"}\n')
  const invalid = Buffer.concat([
    Buffer.from('{"type":"message","text":"bad '),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('"}\n')
  ])
  await write(process.stdout, invalid)
}

/**
 * A run of consecutive deltas: they leave in one write, as a CLI's buffered stdout sends a burst (a write per line
 * would make this agent, not Pedelec, the slowest part of a bench's delta burst), then the message they make.
 */
class DeltaRun {
  #text = ""
  #lines: Array<string> = []

  add(text: string): void {
    this.#text += text
    this.#lines.push(`${JSON.stringify({ type: "delta", text } satisfies Event)}\n`)
  }

  async flush(): Promise<void> {
    if (this.#lines.length > 0) await write(process.stdout, this.#lines.join(""))
    this.#lines = []
    const text = this.#text
    this.#text = ""
    if (text !== "") await emit({ type: "message", text })
  }
}

const run = async (sessionId: string, script: ReadonlyArray<string>) => {
  const deltas = new DeltaRun()
  for (const line of script) {
    const { name, arg } = parseCommand(line)
    if (name === "delta" || name === "stamp") {
      deltas.add(name === "stamp" ? `@${Date.now()} ` : arg)
      continue
    }
    await deltas.flush()
    switch (name) {
      case "say":
        await emit({ type: "message", text: arg })
        break
      case "call": {
        const [tool, json] = splitFirst(arg)
        const thread = process.env.PEDELEC_THREAD_ID
        await emit({ type: "tool", name: "pedelec-cli", detail: `tool-call ${tool}` })
        const threadArgs = thread === undefined ? [] : ["--thread-id", thread]
        const started = performance.now()
        const result = await runCli([...threadArgs, "tool-call", tool, json === "" ? "{}" : json])
        // The spawn-to-result time is what `npm run bench` reports for a tool call.
        const elapsed = (performance.now() - started).toFixed(2)
        await emit({ type: "message", text: `tool ${tool} exit ${result.code}: ${result.line} (${elapsed} ms)` })
        break
      }
      case "cli": {
        await emit({ type: "tool", name: "pedelec-cli", detail: arg })
        const result = await runCli(splitWords(arg))
        await emit({ type: "message", text: `cli exit ${result.code}: ${result.line}` })
        break
      }
      case "sleep":
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(arg) || 0)))
        break
      case "crash": {
        const code = Number(arg) || 1
        await write(process.stderr, `scripted agent crashed on purpose (exit ${code})\n`)
        return exit(code)
      }
      case "hang":
        // An agent that ignores polite signals, so only the SIGKILL escalation can stop it.
        process.on("SIGINT", () => {}).on("SIGTERM", () => {})
        setInterval(() => {}, 1e9)
        return new Promise<never>(() => {})
      case "garbage":
        await garbage()
        break
      case "grandchild":
        await spawnGrandchild()
        break
      case "escape":
        await escapeTheTree()
        break
      case "error": {
        const [code, message] = splitFirst(arg)
        await emit({ type: "error", code, message })
        return exit(1)
      }
      case "read": {
        // A file of the workspace (the agent's cwd), said back as the agent's message.
        const text = await readFile(arg, "utf8").catch((error: Error) => `read failed: ${error.message}`)
        await emit({ type: "message", text })
        break
      }
      case "write": {
        // `write <path> <text…>`: what an agent leaves for the page (e.g. a result asset).
        const [target, text] = splitFirst(arg)
        await mkdir(path.dirname(target), { recursive: true })
        await writeFile(target, text)
        await emit({ type: "message", text: `wrote ${target}` })
        break
      }
      case "remember":
        writeMemory(sessionId, [...readMemory(sessionId), arg])
        await emit({ type: "message", text: `remembered: ${arg}` })
        break
      case "recall": {
        const items = readMemory(sessionId)
        await emit({ type: "message", text: items.length === 0 ? "recalled nothing" : `recalled: ${items.join(", ")}` })
        break
      }
      default:
        await emit({ type: "error", code: "PROVIDER_FAILED", message: `unknown script command: ${name}` })
        return exit(2)
    }
  }
  await deltas.flush()
}

const main = async () => {
  const argv = process.argv.slice(2)
  if (argv.includes("--version")) {
    await write(process.stdout, `scripted-agent ${SCRIPTED_AGENT_VERSION}\n`)
    return
  }
  const resumeAt = argv.indexOf("--resume")
  const resume = resumeAt < 0 ? undefined : argv[resumeAt + 1]
  if (resume !== undefined && !SESSION_ID_PATTERN.test(resume)) {
    await write(process.stderr, `invalid --resume id: ${JSON.stringify(resume)}\n`)
    return exit(2)
  }
  const prompt = await readStdin()
  const sessionId = resume ?? randomUUID()
  await emit({ type: "session", id: sessionId })
  const script = extractScript(prompt)
  if (script === undefined) await emit({ type: "message", text: echoText(prompt) })
  else await run(sessionId, script)
  await emit({ type: "done" })
}

main().catch(async (error: unknown) => {
  await write(process.stderr, `scripted agent failed: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(70)
})
