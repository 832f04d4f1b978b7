/**
 * Layout — where the headless Core finds its sibling programs when none is configured: `pedelec-cli` lives in
 * `apps/cli/bin` next to this app in the repository. Packaged builds set `PEDELEC_BIN_DIR` instead.
 */
import { existsSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

export const defaultBinDir = (): string | undefined => {
  // apps/core-daemon/dist/pedelec-core.mjs (bundled) and apps/core-daemon/src/*.ts (sources) are both two levels
  // below apps/.
  const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../cli/bin")
  return existsSync(path.join(dir, "pedelec-cli")) ? dir : undefined
}
