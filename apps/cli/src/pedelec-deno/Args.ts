/**
 * Args — pedelec-deno's argv: `[--thread-id <id>] run <workspace-relative-script> [--] [args…]`, `--help`,
 * `--version`. Shapes only; the thread id and capability are checked by the shared agent path, the script path by
 * Workspace. Deno flags are not accepted: what a script may do is fixed, not the caller's choice.
 */

export type Parsed =
  | { readonly _tag: "Run"; readonly threadId: string; readonly script: string; readonly args: ReadonlyArray<string> }
  | { readonly _tag: "Help" }
  | { readonly _tag: "Version" }
  | { readonly _tag: "UsageError"; readonly message: string }

export const USAGE = "pedelec-deno [--thread-id <id>] run <workspace-relative-script> [--] [args…]"

export const HELP = `pedelec-deno: runs a JavaScript/TypeScript file of your Pedelec session's workspace with Pedelec's pinned Deno.

  ${USAGE}
  --thread-id defaults to $PEDELEC_THREAD_ID; the session's capability is read from $PEDELEC_SESSION_CAP.

The script may read and write files of the workspace only (paths relative to the workspace, its working folder). It
has no network, no environment variables, no subprocesses, no FFI and no system information, and may import only
files of the workspace (no npm:, jsr: or https: imports). It is stopped at a timeout; its output is cut after a cap.
Its exit code and output are the script's. pedelec-deno's own failures print one JSON line,
{"ok":false,"error":{"code","message"}}, and exit 2 (usage), 3 (Pedelec or the Deno runtime unavailable),
1 (script refused) or 124 (timeout). If it is unavailable, report that; never run the script with node, bun or
another deno.
`

const usage = (message: string): Parsed => ({
  _tag: "UsageError",
  message: `${/[.!?)]$/.test(message) ? message : `${message}.`} Usage: ${USAGE}`
})

export const parseArgs = (argv: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>): Parsed => {
  let threadId: string | undefined
  let command: string | undefined
  let i = 0
  for (; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--help" || arg === "-h") return { _tag: "Help" }
    if (arg === "--version" || arg === "-V") return { _tag: "Version" }
    if (arg === "--thread-id") {
      const value = argv[++i]
      if (value === undefined) return usage("--thread-id needs a value")
      threadId = value
    } else if (arg.startsWith("--thread-id=")) threadId = arg.slice("--thread-id=".length)
    else if (arg.startsWith("-"))
      return usage(
        `pedelec-deno takes no ${JSON.stringify(arg)} option: a script's permissions are fixed (workspace files only)`
      )
    else if (command === undefined) {
      command = arg
      if (command !== "run") return usage(`Unknown command ${JSON.stringify(command)}; the only command is run`)
    } else break
  }
  if (command === undefined) return usage("No command")
  const script = argv[i]
  if (script === undefined || script === "") return usage("No script: pass a workspace-relative path")
  const rest = argv.slice(i + 1)
  const args = rest[0] === "--" ? rest.slice(1) : rest
  const thread = threadId ?? env.PEDELEC_THREAD_ID
  if (thread === undefined || thread === "")
    return usage("No thread id: pass --thread-id <id> or set PEDELEC_THREAD_ID (Pedelec sets it in the agent's shell)")
  return { _tag: "Run", threadId: thread, script, args }
}
