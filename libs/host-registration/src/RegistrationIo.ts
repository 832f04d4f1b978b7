/**
 * RegistrationIo — the two things registration does to the machine, as injectable interfaces: a few file
 * operations and a `reg.exe` runner, with the real Node implementations. Install takes them as a parameter so the
 * Windows and macOS logic is tested on Linux against fakes. Deciding what to write is Install's job, not this one's.
 */
import { execFile } from "node:child_process"
import { chmod, mkdir, rename, rm, rmdir, stat, writeFile } from "node:fs/promises"
import path from "node:path"
import { REG_EXE } from "./Registry.ts"

export interface RegistrationFs {
  readonly exists: (target: string) => Promise<boolean>
  /** Creates `dir` and any missing parents (Install creates the ones it owns one by one, to report each). */
  readonly mkdir: (dir: string) => Promise<void>
  /** Creates or replaces `file` with `text` and sets `mode`. */
  readonly writeFile: (file: string, text: string, mode: number) => Promise<void>
  /** False when there was nothing to remove. */
  readonly removeFile: (file: string) => Promise<boolean>
  /** False when `dir` is absent or not empty: never removes anything but an empty directory. */
  readonly removeEmptyDir: (dir: string) => Promise<boolean>
}

export interface RegResult {
  readonly code: number
  readonly stderr: string
}

/** Runs `reg.exe` with exactly `argv`. */
export type RegRunner = (argv: ReadonlyArray<string>) => Promise<RegResult>

export interface RegistrationIo {
  readonly fs: RegistrationFs
  readonly reg: RegRunner
}

const code = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined

export const nodeFs: RegistrationFs = {
  exists: (target) =>
    stat(target).then(
      () => true,
      () => false
    ),
  mkdir: async (dir) => {
    await mkdir(dir, { recursive: true })
  },
  // Write then rename, so a browser never reads a half-written manifest or launcher.
  writeFile: async (file, text, mode) => {
    const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
    try {
      await writeFile(temporary, text, { mode })
      await chmod(temporary, mode)
      await rename(temporary, file)
    } finally {
      await rm(temporary, { force: true })
    }
  },
  removeFile: (file) =>
    rm(file).then(
      () => true,
      (error: unknown) => {
        if (code(error) === "ENOENT") return false
        throw error
      }
    ),
  removeEmptyDir: (dir) =>
    rmdir(dir).then(
      () => true,
      (error: unknown) => {
        if (["ENOENT", "ENOTEMPTY", "EEXIST", "ENOTDIR"].includes(code(error) ?? "")) return false
        throw error
      }
    )
}

/** `%SystemRoot%\System32\reg.exe` when known, so nothing on PATH can stand in for it. */
const regExe = (): string =>
  process.env.SystemRoot ? path.win32.join(process.env.SystemRoot, "System32", REG_EXE) : REG_EXE

export const nodeReg: RegRunner = (argv) =>
  new Promise((resolve) => {
    execFile(regExe(), [...argv], { windowsHide: true }, (error, _stdout, stderr) => {
      if (error === null) return resolve({ code: 0, stderr: String(stderr) })
      const exit = typeof error.code === "number" ? error.code : 1
      resolve({ code: exit, stderr: String(stderr) || error.message })
    })
  })

export const nodeIo: RegistrationIo = { fs: nodeFs, reg: nodeReg }
