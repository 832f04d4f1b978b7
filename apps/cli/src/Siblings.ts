/**
 * Siblings — where pedelec-cli finds the programs it registers for the browser: the native host's built entry and
 * the headless Core's bin, next to this app in the repository (`apps/native-host/dist`, `apps/core-daemon/bin`), the
 * way apps/core-daemon Layout finds pedelec-cli. `PEDELEC_NATIVE_HOST_ENTRY` and `PEDELEC_CORE_BIN` override
 * them (packaged installs, tests). It only computes paths; whether they exist is the caller's question.
 */
import { existsSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

export const HOST_ENTRY = ["native-host", "dist", "pedelec-native-host.mjs"]
export const CORE_BIN = ["core-daemon", "bin", "pedelec-core"]

/**
 * The repository's `apps/` dir seen from this module: `apps/cli/dist/chunks/*.mjs` (the bundle's lazy chunk),
 * `apps/cli/dist/*.mjs` or `apps/cli/src/*.ts` (sources under vitest/tsx).
 */
const appsDir = (): string => {
  const here = path.dirname(fileURLToPath(import.meta.url))
  const candidates = [path.resolve(here, "../../.."), path.resolve(here, "../..")]
  return candidates.find((dir) => existsSync(path.join(dir, "cli", "bin", "pedelec-cli"))) ?? candidates[0]!
}

const configured = (value: string | undefined): string | undefined =>
  value !== undefined && value.length > 0 ? path.resolve(value) : undefined

export interface Siblings {
  readonly hostEntry: string
  readonly coreCommand: string
}

export const siblings = (env: Readonly<Record<string, string | undefined>>): Siblings => {
  const apps = appsDir()
  return {
    hostEntry: configured(env.PEDELEC_NATIVE_HOST_ENTRY) ?? path.join(apps, ...HOST_ENTRY),
    coreCommand: configured(env.PEDELEC_CORE_BIN) ?? path.join(apps, ...CORE_BIN)
  }
}
