/**
 * Layout — where the headless Core finds its sibling programs when none is configured: `pedelec-cli` lives in
 * `apps/cli/bin` next to this app in the repository. Packaged builds set `PEDELEC_BIN_DIR` instead.
 */
import { existsSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

export const defaultBinDir = (): string | undefined => {
  // From apps/core-daemon/dist/pedelec-core.mjs (bundled) or apps/core-daemon/src/headless/*.ts (sources) to apps/cli/bin.
  const here = path.dirname(fileURLToPath(import.meta.url))
  const candidates = [path.resolve(here, "../../cli/bin"), path.resolve(here, "../../../cli/bin")]
  return candidates.find((dir) => existsSync(path.join(dir, "pedelec-cli")))
}
