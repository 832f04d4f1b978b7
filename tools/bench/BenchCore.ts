/**
 * BenchCore — a running Core for one scenario: a fresh temp home, the built Core started in it (CoreProcess), its
 * announcement, and a host-role client as the native host would open one. Everything is gone when the scenario's
 * body returns or throws. It does not start the Core itself (test-kit's CoreProcess does) nor measure anything.
 */
import { mkdtemp, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import type { Origin } from "@pedelec/contracts/Ids"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { connectHost } from "@pedelec/core-client/CoreClient"
import { BUILT, startCoreProcess } from "@pedelec/test-kit/core/CoreProcess"
import type * as Effect from "effect/Effect"

/** The page origin the bench's host client speaks for (port 9, discard: no page is behind it). */
export const ORIGIN = "http://127.0.0.1:9" as Origin

export interface BenchCore {
  readonly home: string
  readonly info: CoreRuntimeInfo
}

/** A private temp folder, resolved through symlinks (Core refuses workspace paths with a symlinked component). */
export const tempDir = async (prefix: string) => realpath(await mkdtemp(path.join(os.tmpdir(), prefix)))

/** Runs `body` against a Core of its own, then stops the Core (SIGTERM, as a user's session ends) and drops its home. */
export const withCore = async <A>(prefix: string, body: (core: BenchCore) => Promise<A>): Promise<A> => {
  const home = await tempDir(prefix)
  const core = await startCoreProcess({ home, env: { PEDELEC_ENABLE_SCRIPTED: "1" }, stderr: "inherit" })
  try {
    return await body({ home, info: core.info })
  } finally {
    await core.stop()
    await rm(home, { recursive: true, force: true })
  }
}

/** The built bins' folder (pedelec-cli, pedelec-deno), and the repository it was built in. */
export const cliBinDir = BUILT.cliBinDir
export const repoRoot = path.resolve(BUILT.cliBinDir, "../../..")

/** A host-role client on the Core's socket, greeted, closed with the caller's scope. */
export const hostClient = (info: CoreRuntimeInfo) => connectHost(info, { component: "native-host", version: "bench" })

export type HostClient = Effect.Success<ReturnType<typeof hostClient>>
