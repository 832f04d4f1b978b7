/**
 * PedelecMcp — the `pedelec` MCP server an agent CLI is configured with: `pedelec-cli mcp`, which serves the
 * session's page tools on one connection to Core. It owns finding that pedelec-cli (Core puts its bin folder first on
 * the agent's PATH, so the first pedelec-cli on that PATH is ours) and what the server needs from the environment.
 * How each CLI is told about the server (flags, config) is its adapter's; the server itself is apps/cli's. For a CLI
 * that reads MCP servers only from files, it also owns the life of a config file Pedelec writes into the workspace.
 *
 * The session's capability reaches the server through the environment, never on an argv: an argv is readable by
 * every user of the machine (/proc/<pid>/cmdline), the environment only by the same user.
 */
import { accessSync, constants, lstatSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs"
import path from "node:path"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"
import * as Effect from "effect/Effect"

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

/** A config file Pedelec writes into a session's workspace for a CLI that reads MCP servers only from files. */
export interface WorkspaceMcpFile {
  /** Writes the file again (before a turn); false when it could not be written, and that turn has no server. */
  readonly refresh: () => boolean
}

/** Whether `dir` is a real folder (not a symlink the agent may have put in its place). */
const isRealDir = (dir: string) => lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true

/**
 * Replaces whatever is at the file's place with Pedelec's content, never writing through a symlink: the agent may
 * have turned the folder or the file into one pointing at a file of the user's.
 */
const writeFresh = (dir: string, file: string, content: string): boolean => {
  try {
    if (!isRealDir(dir)) {
      rmSync(dir, { force: true })
      mkdirSync(dir)
    }
    rmSync(file, { force: true })
    writeFileSync(file, content, { mode: 0o600, flag: "wx" })
    return true
  } catch {
    rmSync(file, { force: true })
    return false
  }
}

/** Removes Pedelec's file, and the folder when the CLI left nothing else there; a symlink in its place just goes. */
const removeOwned = (dir: string, file: string) => {
  if (!isRealDir(dir)) return rmSync(dir, { force: true })
  rmSync(file, { force: true })
  try {
    rmdirSync(dir)
  } catch {
    // The CLI (or the agent) left something else there: the folder stays.
  }
}

/**
 * `config` as `<workspace>/<folder>/<fileName>` for the session, removed with its scope; undefined (no file) without
 * a config or when the workspace has `folder` of its own: a user's folder is never edited. The agent can write
 * workspace files, so the adapter refreshes it before each turn and an edit never reaches the next CLI.
 */
export const workspaceMcpFile = (workspace: string, folder: string, fileName: string, config: object | undefined) =>
  Effect.acquireRelease(
    Effect.sync((): WorkspaceMcpFile | undefined => {
      const dir = path.join(workspace, folder)
      if (config === undefined || lstatSync(dir, { throwIfNoEntry: false }) !== undefined) return undefined
      const file = path.join(dir, fileName)
      const content = `${JSON.stringify(config, null, 2)}\n`
      const refresh = () => writeFresh(dir, file, content)
      return refresh() ? { refresh } : undefined
    }),
    (owned) =>
      Effect.sync(() =>
        owned === undefined
          ? undefined
          : removeOwned(path.join(workspace, folder), path.join(workspace, folder, fileName))
      )
  )
