/**
 * GeminiMcp — how gemini is given the `pedelec` MCP server (PedelecMcp): as `mcpServers.pedelec` in a settings file
 * Pedelec writes into the workspace (`<workspace>/.gemini/settings.json`) for the session, rewritten before every
 * turn and removed at its end. It owns that file's content and life; the argv that goes with it is GeminiAdapter's.
 *
 * Why the workspace file: gemini 0.61.0 has no flag or environment variable that adds an MCP server for one run.
 * The system settings and defaults files it reads from a path in GEMINI_CLI_SYSTEM_SETTINGS_PATH /
 * GEMINI_CLI_SYSTEM_DEFAULTS_PATH are skipped unless they and every folder above them are owned by root and not
 * group- or world-writable ("Security Warning: Skipping system settings file …", verified), GEMINI_CLI_HOME would
 * move the user's whole ~/.gemini (login, settings, sessions), and extensions load only from ~/.gemini/extensions.
 * The workspace file is the one tier Pedelec can own without touching the user's: it is written only when the
 * workspace has no `.gemini` folder of its own (a managed workspace never has one; a user's folder that does keeps
 * it untouched and its session falls back to `pedelec-cli … tool-call` from the shell).
 *
 * The file holds no secret: the server's `env` names the PEDELEC_* variables as `$VAR`, which gemini expands from its
 * own environment when it loads the file (it must be explicit: gemini starts MCP servers with an environment it
 * redacts). The agent can write workspace files, so the file is written again before each turn: an edit the agent
 * made to point `pedelec` at another command never reaches the next gemini.
 */
import { lstatSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs"
import path from "node:path"
import * as Effect from "effect/Effect"
import {
  PEDELEC_MCP_ENV_VARS,
  PEDELEC_MCP_NAME,
  PEDELEC_MCP_TOOL_TIMEOUT_MS,
  type PedelecMcpServer
} from "../PedelecMcp.ts"

/** The settings file's content: the server, its variables by name, trusted (headless gemini cannot ask) and slow. */
export const geminiMcpSettings = (server: PedelecMcpServer) => ({
  mcpServers: {
    [PEDELEC_MCP_NAME]: {
      command: server.command,
      args: [...server.args],
      env: Object.fromEntries(PEDELEC_MCP_ENV_VARS.map((name) => [name, `$${name}`])),
      // gemini gives an MCP request 10 minutes by default; a page tool call may legitimately last much longer.
      timeout: PEDELEC_MCP_TOOL_TIMEOUT_MS,
      trust: true
    }
  }
})

/** The workspace's settings file gemini reads (its project tier). */
export const geminiWorkspaceSettings = (workspace: string) => path.join(workspace, ".gemini", "settings.json")

export interface GeminiMcpFile {
  /** Writes the file again (before a turn); false when it could not be written, and that turn has no server. */
  readonly refresh: () => boolean
}

/** Whether `dir` is a real folder (not a symlink the agent may have put in its place). */
const isRealDir = (dir: string) => lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true

/**
 * Replaces whatever is at the file's place with Pedelec's content, never writing through a symlink: the agent may
 * have turned `.gemini` or the file into one pointing at a file of the user's.
 */
const writeFresh = (workspace: string, content: string): boolean => {
  const dir = path.join(workspace, ".gemini")
  const file = geminiWorkspaceSettings(workspace)
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

/** Removes Pedelec's file, and the folder when gemini left nothing else there; a symlink in its place just goes. */
const removeOwned = (workspace: string) => {
  const dir = path.join(workspace, ".gemini")
  if (!isRealDir(dir)) return rmSync(dir, { force: true })
  rmSync(geminiWorkspaceSettings(workspace), { force: true })
  try {
    rmdirSync(dir)
  } catch {
    // gemini (or the agent) left something else there: the folder stays.
  }
}

/**
 * The session's settings file for `server`, removed with the session's scope; undefined when there is no server or
 * the workspace has a `.gemini` folder of its own (then the session has no MCP server).
 */
export const geminiMcpFile = (workspace: string, server: PedelecMcpServer | undefined) =>
  Effect.acquireRelease(
    Effect.sync((): GeminiMcpFile | undefined => {
      if (server === undefined || lstatSync(path.join(workspace, ".gemini"), { throwIfNoEntry: false }) !== undefined)
        return undefined
      const content = `${JSON.stringify(geminiMcpSettings(server), null, 2)}\n`
      const refresh = () => writeFresh(workspace, content)
      return refresh() ? { refresh } : undefined
    }),
    (owned) => Effect.sync(() => (owned === undefined ? undefined : removeOwned(workspace)))
  )
