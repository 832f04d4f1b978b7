// Installs the agent CLIs the conformance suite runs, at exact versions, into a cache outside the tracked files
// (<repo>/node_modules/.cache/pedelec-clis/<cli>-<version>), reused while it answers `--version` with that version.
// npm runs with a temp HOME and its own cache there, so nothing lands in the user's real home. Each CLI gets a
// `bin/` folder holding only its command, which the tests put first on the Core's PATH.

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
  }
}

const run = promisify(execFile)
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const cacheRoot = path.join(repoRoot, "node_modules", ".cache", "pedelec-clis")

/** Claude Code 2.1.198+ wants Node 22; 2.1.197 is the newest that installs cleanly on Node 20 (research §1). */
export const CLAUDE_VERSION = "2.1.197"
const CLAUDE_PACKAGE = "@anthropic-ai/claude-code"

const versionOf = async (command: string): Promise<string | undefined> => {
  try {
    const { stdout } = await run(command, ["--version"], { timeout: 30_000 })
    return /\d+\.\d+\.\d+/.exec(stdout)?.[0]
  } catch {
    return undefined
  }
}

/**
 * The npm package's postinstall hard-links the platform binary over its `bin/claude.exe` placeholder. If scripts
 * were blocked the placeholder stays, so fall back to the binary of the optional platform package.
 */
const workingClaude = async (dir: string): Promise<string | undefined> => {
  const arch = `${process.platform}-${process.arch}`
  const candidates = [
    path.join(dir, "node_modules", ".bin", "claude"),
    path.join(dir, "node_modules", "@anthropic-ai", `claude-code-${arch}`, "claude"),
    path.join(dir, "node_modules", "@anthropic-ai", `claude-code-${arch}-musl`, "claude")
  ]
  for (const candidate of candidates) {
    if ((await versionOf(candidate)) === CLAUDE_VERSION) return candidate
  }
  return undefined
}

const installClaude = async (dir: string): Promise<void> => {
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  await writeFile(
    path.join(dir, "package.json"),
    `${JSON.stringify({ name: "pedelec-cli-cache", private: true, dependencies: { [CLAUDE_PACKAGE]: CLAUDE_VERSION } })}\n`
  )
  const home = await mkdtemp(path.join(os.tmpdir(), "pedelec-npm-home-"))
  try {
    // Optional dependencies carry the native binary: never --omit=optional.
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

export const ensureClaude = async (): Promise<{ binDir: string; version: string }> => {
  const dir = path.join(cacheRoot, `claude-${CLAUDE_VERSION}`)
  const binDir = path.join(dir, "bin")
  const linked = path.join(binDir, "claude")
  if ((await versionOf(linked)) === CLAUDE_VERSION) return { binDir, version: CLAUDE_VERSION }
  const started = Date.now()
  let found = await workingClaude(dir)
  if (found === undefined) {
    await installClaude(dir)
    found = await workingClaude(dir)
  }
  if (found === undefined) throw new Error(`${CLAUDE_PACKAGE}@${CLAUDE_VERSION} installed in ${dir} but does not run`)
  await rm(binDir, { recursive: true, force: true })
  await mkdir(binDir, { recursive: true })
  await symlink(found, linked)
  process.stderr.write(`conformance: claude ${CLAUDE_VERSION} ready in ${Date.now() - started} ms (${dir})\n`)
  return { binDir, version: CLAUDE_VERSION }
}

export default async function setup(project: TestProject): Promise<void> {
  const claude = await ensureClaude()
  project.provide("claudeBinDir", claude.binDir)
  project.provide("claudeVersion", claude.version)
}
