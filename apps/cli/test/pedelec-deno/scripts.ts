/**
 * What the pedelec-deno suites share: the pinned Deno, temp workspaces (with a folder outside them holding a
 * secret), the walls to test (the first wall alone, and bubblewrap where it works here), and running a script
 * through Script.prepare + Run.execute in-process, output collected.
 */
import { spawnSync } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { Writable } from "node:stream"
import { type Failure, Refused } from "../../src/pedelec-deno/Failure.ts"
import { execute } from "../../src/pedelec-deno/Run.ts"
import { denoBinary } from "../../src/pedelec-deno/Runtime.ts"
import { findWall, type Wall } from "../../src/pedelec-deno/Sandbox.ts"
import type { GraphCache } from "../../src/pedelec-deno/Script/GraphCache.ts"
import { dispose, type Policy, type Prepared, type PrepareHooks, prepare } from "../../src/pedelec-deno/Script.ts"
import { RESOURCE_CAPS } from "../../src/pedelec-deno/Watchdog.ts"

export const SECRET = "the secret outside the workspace"

export const deno = async (): Promise<string> => {
  const found = await denoBinary(process.env)
  if (typeof found !== "string") throw new Error(`no Deno for the tests: ${found.error.message}`)
  return found
}

/** bubblewrap, when it is installed and can start a sandbox here (CI installs it; `.ci/run`). */
export const bwrapWall = async (): Promise<Wall | undefined> => {
  const wall = await findWall()
  if (wall.kind !== "bwrap") return undefined
  const probe = spawnSync(wall.bwrap, ["--unshare-all", "--ro-bind", "/", "/", "true"], { stdio: "ignore" })
  return probe.status === 0 ? wall : undefined
}

export interface Place {
  /** The workspace's real path. */
  readonly workspace: string
  /** A folder beside it, with `secret.txt`. */
  readonly outside: string
  readonly file: (relative: string, text: string) => Promise<string>
  readonly remove: () => Promise<void>
}

export const place = async (): Promise<Place> => {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-deno-test-")))
  const workspace = path.join(root, "workspace")
  const outside = path.join(root, "outside")
  await mkdir(workspace)
  await mkdir(outside)
  await writeFile(path.join(outside, "secret.txt"), SECRET)
  return {
    workspace,
    outside,
    file: async (relative, text) => {
      const file = path.join(workspace, relative)
      await mkdir(path.dirname(file), { recursive: true })
      await writeFile(file, text)
      return file
    },
    remove: () => rm(root, { recursive: true, force: true })
  }
}

const sink = () => {
  const chunks: Array<Buffer> = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk)
      done()
    }
  })
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") }
}

export type Outcome =
  | {
      readonly _tag: "Ran"
      readonly exit: number
      readonly stdout: string
      readonly stderr: string
      readonly failure?: Failure
      readonly wall: Wall["kind"]
      readonly dir: string
      readonly elapsedMs: number
      readonly graph: Prepared["graph"]
    }
  | { readonly _tag: "Refused"; readonly failure: Failure }

export interface RunOptions {
  readonly wall: Wall
  readonly args?: ReadonlyArray<string>
  readonly policy?: Partial<Policy>
  readonly hooks?: PrepareHooks
  /** Checked graphs kept here (as pedelec-deno keeps them in its Core's home); none: every run checked in full. */
  readonly cache?: GraphCache
  /** Called once the script is prepared, before it runs. */
  readonly onPrepared?: (prepared: Prepared) => void
  /** Called once the script ended, before its private dir is removed. */
  readonly onEnded?: (prepared: Prepared) => Promise<void>
}

/** Prepares and runs `script` of the place's workspace, as pedelec-deno does after Core's answer. */
export const runScript = async (at: Place, script: string, options: RunOptions): Promise<Outcome> => {
  let prepared: Prepared
  try {
    prepared = await prepare(
      {
        deno: await deno(),
        wall: options.wall,
        policy: {
          workspace: at.workspace,
          timeoutMs: 20_000,
          outputBytes: 1024 * 1024,
          ...RESOURCE_CAPS,
          ...options.policy
        },
        script,
        args: options.args ?? [],
        ...(options.cache === undefined ? {} : { cache: options.cache })
      },
      options.hooks
    )
  } catch (error) {
    if (error instanceof Refused) return { _tag: "Refused", failure: error.failure }
    throw error
  }
  options.onPrepared?.(prepared)
  const stdout = sink()
  const stderr = sink()
  const started = performance.now()
  const done = await execute(prepared, { stdout: stdout.stream, stderr: stderr.stream, stdin: "ignore" })
  const elapsedMs = performance.now() - started
  await options.onEnded?.(prepared)
  await dispose(prepared)
  return {
    _tag: "Ran",
    exit: done.exit,
    stdout: stdout.text(),
    stderr: stderr.text(),
    wall: prepared.wall.kind,
    dir: prepared.dir,
    elapsedMs,
    graph: prepared.graph,
    ...(done.failure === undefined ? {} : { failure: done.failure })
  }
}

export const ran = (outcome: Outcome) => {
  if (outcome._tag !== "Ran") throw new Error(`expected a run, got ${JSON.stringify(outcome.failure)}`)
  return outcome
}

export const refusedWith = (outcome: Outcome) => {
  if (outcome._tag !== "Refused") throw new Error(`expected a refusal, got a run: ${JSON.stringify(outcome)}`)
  return outcome.failure
}

/** Live processes whose command line names `text` (a private copy's folder): a script and its sandbox. */
export const processesNaming = async (text: string): Promise<Array<string>> => {
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name))
  const found = await Promise.all(
    pids.map(async (pid) => {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")
      const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
      const zombie = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z"
      return cmdline.includes(text) && !zombie ? [pid] : []
    })
  )
  return found.flat()
}
