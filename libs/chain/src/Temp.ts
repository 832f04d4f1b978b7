/**
 * Temp — the chain's temporary directories (Pedelec homes, Chromium profiles, certificates), each made private and
 * resolved through symlinks (Core rejects workspace paths with a symlinked component, and /tmp may be one).
 */
import { mkdtemp, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"

export const tempDir = async (prefix: string): Promise<string> =>
  realpath(await mkdtemp(path.join(os.tmpdir(), `pedelec-e2e-${prefix}-`)))

export const removeDir = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true })
