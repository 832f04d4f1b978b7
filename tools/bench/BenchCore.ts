/**
 * BenchCore — a running Core for one scenario: a fresh temp home, the built Core started in it (CoreProcess), its
 * announcement, and a host-role client as the native host would open one. Everything is gone when the scenario's
 * body returns or throws. It does not start the Core itself (CoreProcess does) nor measure anything.
 */
import { mkdtemp, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type { Origin } from "@pedelec/contracts/Ids"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { connectHost } from "@pedelec/core-client/CoreClient"
import { readRuntimeInfo } from "@pedelec/core-client/RuntimeFile"
import * as Effect from "effect/Effect"
import { startCore } from "./CoreProcess.ts"

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
  const child = await startCore(home)
  try {
    const info = await Effect.runPromise(
      readRuntimeInfo(path.join(home, "run", "core.json")).pipe(Effect.provide(NodeFileSystem.layer))
    )
    return await body({ home, info })
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
    }
    await rm(home, { recursive: true, force: true })
  }
}

/** A host-role client on the Core's socket, greeted, closed with the caller's scope. */
export const hostClient = (info: CoreRuntimeInfo) => connectHost(info, { component: "native-host", version: "bench" })

export type HostClient = Effect.Success<ReturnType<typeof hostClient>>
