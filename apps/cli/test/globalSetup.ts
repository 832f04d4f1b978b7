// Builds the bundle once before the suite, so the tests always run the CLI an agent would run (dist/), never a
// stale one. Nx also runs `build` before `test`; this keeps a bare `npx vitest run` honest.
import { execFileSync } from "node:child_process"
import path from "node:path"
import { fileURLToPath } from "node:url"

export const setup = (): void => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
  execFileSync(process.execPath, ["--import", "tsx", path.join(root, "scripts", "build.ts")], {
    cwd: root,
    stdio: "inherit"
  })
}
