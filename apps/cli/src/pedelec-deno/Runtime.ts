/**
 * Runtime — where the pinned Deno is: the npm `deno` package's platform binary (`@deno/<os>-<arch>[-glibc]`, an
 * optional dependency of this app), resolved from this file's location like node resolves it, or
 * `PEDELEC_DENO_BIN` (packaged installs, tests). Never a `deno` from PATH: a script runs with the Deno Pedelec
 * pins, or not at all (DENO_UNAVAILABLE).
 */
import { accessSync, constants, realpathSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import path from "node:path"
import { denoUnavailable, type Failure } from "./Failure.ts"

/** The platform package `deno` would run, or undefined where npm `deno` ships none. */
export const platformPackage = (
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch
): string | undefined => {
  const os = platform === "win32" ? "win32" : platform === "darwin" ? "darwin" : platform === "linux" ? "linux" : ""
  if (os === "" || (arch !== "x64" && arch !== "arm64")) return undefined
  return `@deno/${os}-${arch}${os === "linux" ? "-glibc" : ""}`
}

const fromPackage = (): string | Failure => {
  const target = platformPackage()
  if (target === undefined)
    return denoUnavailable(`npm deno has no build for ${process.platform}-${process.arch}`, {
      platform: `${process.platform}-${process.arch}`
    })
  try {
    const denoPackage = createRequire(import.meta.url).resolve("deno/package.json")
    const binaryPackage = createRequire(denoPackage).resolve(`${target}/package.json`)
    return path.join(path.dirname(binaryPackage), process.platform === "win32" ? "deno.exe" : "deno")
  } catch {
    return denoUnavailable(`the Deno runtime (npm ${target}) is not installed next to pedelec-deno`, {
      package: target
    })
  }
}

/** The real path of an executable Deno binary, or DENO_UNAVAILABLE saying which one is missing. */
export const denoBinary = async (env: Readonly<Record<string, string | undefined>>): Promise<string | Failure> => {
  const configured = env.PEDELEC_DENO_BIN
  const candidate = configured !== undefined && configured !== "" ? path.resolve(configured) : fromPackage()
  if (typeof candidate !== "string") return candidate
  try {
    // Synchronous, like the rest of a run's set-up: three calls, each of which would cost an event loop turn.
    const real = realpathSync.native(candidate)
    if (!statSync(real).isFile()) throw new Error("not a file")
    accessSync(real, constants.X_OK)
    return real
  } catch (cause) {
    const reason = (cause as { code?: string }).code ?? String(cause)
    return denoUnavailable(`its Deno runtime ${candidate} is missing or not executable (${reason})`, {
      path: candidate
    })
  }
}
