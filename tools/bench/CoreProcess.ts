// The built headless Core for a bench, in its own process like a user's: started in a given home with the scripted
// agent enabled and pedelec-cli/pedelec-deno first on its agents' PATH, ready once it has announced itself. Starting
// and announcing are test-kit's CoreProcess; this file keeps the names the benches import.
import type { ChildProcess } from "node:child_process"
import path from "node:path"
import { BUILT, startCoreProcess } from "@pedelec/test-kit/core/CoreProcess"

export const repoRoot = path.resolve(BUILT.cliBinDir, "../../..")
export const cliBinDir = BUILT.cliBinDir

export const startCore = async (home: string): Promise<ChildProcess> =>
  (await startCoreProcess({ home, env: { PEDELEC_ENABLE_SCRIPTED: "1" }, stderr: "inherit" })).child
