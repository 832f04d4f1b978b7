/**
 * PedelecMcp — the `pedelec` MCP server an agent CLI is configured with: `pedelec-cli mcp`, which serves the
 * session's page tools on one connection to Core. It owns finding that pedelec-cli (Core puts its bin folder first on
 * the agent's PATH, so the first pedelec-cli on that PATH is ours) and what the server needs from the environment.
 * How each CLI is told about the server (flags, config) is its adapter's; the server itself is apps/cli's.
 *
 * The session's capability reaches the server through the environment, never on an argv: an argv is readable by
 * every user of the machine (/proc/<pid>/cmdline), the environment only by the same user.
 */
import { accessSync, constants } from "node:fs"
import path from "node:path"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"

/** The name every CLI registers the server under; the model sees its tools as `pedelec/<name>` (or the CLI's form). */
export const PEDELEC_MCP_NAME = "pedelec"

/**
 * What `pedelec-cli mcp` needs from the agent's environment: the session, its capability and the Core home, and PATH
 * because pedelec-cli is a Node script (`#!/usr/bin/env node`). A CLI that starts servers with a scrubbed environment
 * is told to pass these on by name.
 */
export const PEDELEC_MCP_ENV_VARS: ReadonlyArray<string> = [
  "PEDELEC_THREAD_ID",
  "PEDELEC_SESSION_CAP",
  "PEDELEC_HOME",
  "PATH"
]

/** A page tool call may last its longest timeout stretched by progress, plus a minute for Core and the page. */
export const PEDELEC_MCP_TOOL_TIMEOUT_MS = TOOL_LIMITS.maxTimeoutMs * TOOL_LIMITS.maxProgressFactor + 60_000

export interface PedelecMcpServer {
  /** The absolute path of pedelec-cli: a CLI may start the server with a PATH of its own. */
  readonly command: string
  readonly args: ReadonlyArray<string>
}

const isExecutable = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The server for a session's environment, or undefined when its PATH has no pedelec-cli (a Core without a bin
 * folder): the agent then has only `pedelec-cli … tool-call` from its shell, as before.
 */
export const pedelecMcpServer = (env: Readonly<Record<string, string>>): PedelecMcpServer | undefined => {
  const dirs = (env.PATH ?? "").split(path.delimiter).filter((dir) => path.isAbsolute(dir))
  const command = dirs.map((dir) => path.join(dir, "pedelec-cli")).find(isExecutable)
  return command === undefined ? undefined : { command, args: ["mcp"] }
}
