/**
 * HomeLayout — where everything of one Pedelec home lives: `$PEDELEC_HOME` (default `~/.pedelec`) with `run/`,
 * `sessions/`, `logs/`, `workspaces/`, `agent/`, `settings.json`, `secrets.json`, and the Core IPC endpoint. Pure path
 * arithmetic shared by Core, pedelec-cli, the native host and the tests, so every process finds the same socket.
 * Creating the directories and their permissions is the owner's job (Core), not this module's. No Effect here:
 * pedelec-cli's agent path reads it and must start fast.
 */
import { createHash } from "node:crypto"
import os from "node:os"
import path from "node:path"

export interface CorePathsShape {
  readonly home: string
  readonly runDir: string
  /** Unix socket path, or a Windows named pipe. */
  readonly socketPath: string
  /** `run/core.json`: pid, socket and launch secret of the running Core (0600). */
  readonly runtimeFile: string
  /** `run/core.lock`: one Core per home. */
  readonly lockFile: string
  readonly sessionsDir: string
  readonly logsDir: string
  readonly workspacesDir: string
  /** `agent/<sessionId>/`: pedelec-agent's conversations (Ollama), private like the logs; removed when it ends. */
  readonly agentDir: string
  readonly settingsFile: string
  readonly secretsFile: string
}

/**
 * `sun_path` holds 108 bytes on Linux and 104 on macOS, terminator included; a deeper home would make `bind` fail,
 * so such homes get a short per-user directory instead.
 */
const MAX_SOCKET_PATH = 100

export interface PathEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly platform: NodeJS.Platform
  readonly homedir: string
  readonly uid: number
  readonly tmpdir: string
}

export const currentEnvironment = (): PathEnvironment => ({
  env: process.env,
  platform: process.platform,
  homedir: os.homedir(),
  uid: process.getuid?.() ?? 0,
  tmpdir: os.tmpdir()
})

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16)

type Join = (...parts: Array<string>) => string

const socketPathFor = (home: string, runDir: string, environment: PathEnvironment, join: Join): string => {
  const { platform, env, uid, tmpdir } = environment
  // Named pipes are per machine, so the pipe name carries the user and the home.
  if (platform === "win32") return `\\\\.\\pipe\\pedelec-${env.USERNAME ?? "user"}-${digest(home)}`
  const preferred = join(runDir, "core.sock")
  if (Buffer.byteLength(preferred) <= MAX_SOCKET_PATH) return preferred
  const base = env.XDG_RUNTIME_DIR && env.XDG_RUNTIME_DIR.length > 0 ? env.XDG_RUNTIME_DIR : tmpdir
  return join(base, `pedelec-${uid}-${digest(home)}`, "core.sock")
}

export const resolveCorePaths = (environment: PathEnvironment = currentEnvironment()): CorePathsShape => {
  const { env, platform, homedir } = environment
  const paths = platform === "win32" ? path.win32 : path.posix
  const configured = env.PEDELEC_HOME && env.PEDELEC_HOME.length > 0 ? env.PEDELEC_HOME : undefined
  const home = paths.resolve(configured ?? paths.join(homedir, ".pedelec"))
  const runDir = paths.join(home, "run")
  return {
    home,
    runDir,
    socketPath: socketPathFor(home, runDir, environment, paths.join),
    runtimeFile: paths.join(runDir, "core.json"),
    lockFile: paths.join(runDir, "core.lock"),
    sessionsDir: paths.join(home, "sessions"),
    logsDir: paths.join(home, "logs"),
    workspacesDir: paths.join(home, "workspaces"),
    agentDir: paths.join(home, "agent"),
    settingsFile: paths.join(home, "settings.json"),
    secretsFile: paths.join(home, "secrets.json")
  }
}

/** The layout of one explicit home (`pedelec-core --home`, tests), in this process's environment otherwise. */
export const pathsForHome = (home: string, environment: PathEnvironment = currentEnvironment()): CorePathsShape =>
  resolveCorePaths({ ...environment, env: { ...environment.env, PEDELEC_HOME: home } })
