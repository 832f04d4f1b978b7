// Installs the agent CLIs the conformance suite runs, at exact versions, into a cache outside the tracked files
// (<repo>/node_modules/.cache/pedelec-clis/<cli>-<version>), reused while it answers `--version` with that version.
// npm runs with a temp HOME and its own cache there, so nothing lands in the user's real home (opencode's postinstall
// writes under HOME). Each CLI gets a `bin/` folder holding only its command, which the tests put first on the Core's
// PATH.

import { execFile } from "node:child_process"
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** A folder whose only entry is the pinned `claude`. */
    readonly claudeBinDir: string
    readonly claudeVersion: string
    /** A folder whose only entry is the pinned `codex`. */
    readonly codexBinDir: string
    readonly codexVersion: string
    /** A folder whose only entry is the pinned `opencode`. */
    readonly opencodeBinDir: string
    readonly opencodeVersion: string
    /** A folder whose only entry is the pinned `gemini`. */
    readonly geminiBinDir: string
    readonly geminiVersion: string
  }
}

const run = promisify(execFile)
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const cacheRoot = path.join(repoRoot, "node_modules", ".cache", "pedelec-clis")

/** One CLI the suite pins: its npm package, and where a working command may sit once installed. */
interface PinnedCli {
  readonly command: string
  readonly packageName: string
  readonly version: string
  /** Paths (relative to the install folder) to try, in order, for a command answering with `version`. */
  readonly candidates: ReadonlyArray<string>
}

const arch = `${process.platform}-${process.arch}`

/**
 * Claude Code 2.1.198+ wants Node 22; 2.1.197 is the newest that installs cleanly on Node 20 (research §1). Its
 * postinstall hard-links the platform binary over its `bin/claude.exe` placeholder; if scripts were blocked the
 * placeholder stays, so the binary of the optional platform package is the fallback.
 */
export const CLAUDE: PinnedCli = {
  command: "claude",
  packageName: "@anthropic-ai/claude-code",
  version: "2.1.197",
  candidates: [
    "node_modules/.bin/claude",
    `node_modules/@anthropic-ai/claude-code-${arch}/claude`,
    `node_modules/@anthropic-ai/claude-code-${arch}-musl/claude`
  ]
}

/** The version CodexAdapter was verified with; its Node launcher picks the native binary of an optional package. */
export const CODEX: PinnedCli = {
  command: "codex",
  packageName: "@openai/codex",
  version: "0.171.0",
  candidates: ["node_modules/.bin/codex"]
}

/** The version OpencodeAdapter was verified with; its postinstall links the native binary (so it needs a temp HOME). */
export const OPENCODE: PinnedCli = {
  command: "opencode",
  packageName: "opencode-ai",
  version: "1.18.33",
  candidates: ["node_modules/.bin/opencode"]
}

/** The version GeminiAdapter was verified with; plain JavaScript, it needs Node 20 or later. */
export const GEMINI: PinnedCli = {
  command: "gemini",
  packageName: "@google/gemini-cli",
  version: "0.61.0",
  candidates: ["node_modules/.bin/gemini"]
}

const versionOf = async (command: string): Promise<string | undefined> => {
  try {
    // A temp HOME: codex writes helper links under its home on any invocation, even `--version`.
    const home = await mkdtemp(path.join(os.tmpdir(), "pedelec-version-home-"))
    try {
      const { stdout } = await run(command, ["--version"], {
        timeout: 60_000,
        env: { ...process.env, HOME: home, CODEX_HOME: home }
      })
      return /\d+\.\d+\.\d+/.exec(stdout)?.[0]
    } finally {
      await rm(home, { recursive: true, force: true })
    }
  } catch {
    return undefined
  }
}

const workingCommand = async (cli: PinnedCli, dir: string): Promise<string | undefined> => {
  for (const candidate of cli.candidates) {
    const full = path.join(dir, candidate)
    if ((await versionOf(full)) === cli.version) return full
  }
  return undefined
}

const install = async (cli: PinnedCli, dir: string): Promise<void> => {
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  await writeFile(
    path.join(dir, "package.json"),
    `${JSON.stringify({ name: "pedelec-cli-cache", private: true, dependencies: { [cli.packageName]: cli.version } })}\n`
  )
  const home = await mkdtemp(path.join(os.tmpdir(), "pedelec-npm-home-"))
  try {
    // Optional dependencies carry the native binaries: never --omit=optional.
    await run("npm", ["install", "--no-audit", "--no-fund", "--no-update-notifier"], {
      cwd: dir,
      env: { ...process.env, HOME: home, npm_config_cache: path.join(cacheRoot, "npm-cache") },
      timeout: 300_000,
      maxBuffer: 16 * 1024 * 1024
    })
  } finally {
    await rm(home, { recursive: true, force: true })
  }
}

/** The pinned CLI, installed if its cached copy is missing or answers with another version. */
export const ensureCli = async (cli: PinnedCli): Promise<{ binDir: string; version: string }> => {
  const dir = path.join(cacheRoot, `${cli.command}-${cli.version}`)
  const binDir = path.join(dir, "bin")
  const linked = path.join(binDir, cli.command)
  if ((await versionOf(linked)) === cli.version) return { binDir, version: cli.version }
  const started = Date.now()
  let found = await workingCommand(cli, dir)
  if (found === undefined) {
    await install(cli, dir)
    found = await workingCommand(cli, dir)
  }
  if (found === undefined) throw new Error(`${cli.packageName}@${cli.version} installed in ${dir} but does not run`)
  await rm(binDir, { recursive: true, force: true })
  await mkdir(binDir, { recursive: true })
  await symlink(found, linked)
  process.stderr.write(`conformance: ${cli.command} ${cli.version} ready in ${Date.now() - started} ms (${dir})\n`)
  return { binDir, version: cli.version }
}

export default async function setup(project: TestProject): Promise<void> {
  // One after the other: parallel installs of several hundred MB each only fight over a loaded machine's disk.
  const claude = await ensureCli(CLAUDE)
  project.provide("claudeBinDir", claude.binDir)
  project.provide("claudeVersion", claude.version)
  const codex = await ensureCli(CODEX)
  project.provide("codexBinDir", codex.binDir)
  project.provide("codexVersion", codex.version)
  const opencode = await ensureCli(OPENCODE)
  project.provide("opencodeBinDir", opencode.binDir)
  project.provide("opencodeVersion", opencode.version)
  const gemini = await ensureCli(GEMINI)
  project.provide("geminiBinDir", gemini.binDir)
  project.provide("geminiVersion", gemini.version)
}
