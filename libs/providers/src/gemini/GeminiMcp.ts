/**
 * GeminiMcp — how gemini is given the `pedelec` MCP server (PedelecMcp): as `mcpServers.pedelec` in a settings file
 * Pedelec writes into the workspace (`<workspace>/.gemini/settings.json`) for the session, rewritten before every
 * turn and removed at its end. It owns that file's content; its life is PedelecMcp's (workspaceMcpFile), the argv and
 * environment that go with it GeminiAdapter's.
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
import path from "node:path"
import {
  PEDELEC_MCP_ENV_VARS,
  PEDELEC_MCP_NAME,
  PEDELEC_MCP_TOOL_TIMEOUT_MS,
  type PedelecMcpServer,
  workspaceMcpFile
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

/**
 * The session's settings file for `server`, removed with the session's scope; undefined when there is no server or
 * the workspace has a `.gemini` folder of its own (then the session has no MCP server).
 */
export const geminiMcpFile = (workspace: string, server: PedelecMcpServer | undefined) =>
  workspaceMcpFile(workspace, ".gemini", "settings.json", server && geminiMcpSettings(server))
