/**
 * CoreLock — one Core per Pedelec home: an exclusive `run/core.lock` holding the owner's pid, taken before the
 * socket is touched and released at stop. A lock whose pid is dead (a crashed Core) is taken over. It does not
 * start or find Cores (the headless app and the clients do).
 */
import { mkdir, open, readFile, rm } from "node:fs/promises"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { isProcessAlive } from "@pedelec/core-client/ProcessAlive"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CorePaths } from "./CorePaths.ts"

/** Creates the lock file exclusively; on a stale lock, removes it and tries once more. */
const take = async (file: string): Promise<{ readonly owner: number } | "taken"> => {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, "wx", 0o600)
      await handle.writeFile(`${process.pid}\n`)
      await handle.close()
      return "taken"
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const owner = Number.parseInt(await readFile(file, "utf8").catch(() => ""), 10)
      if (Number.isInteger(owner) && owner !== process.pid && isProcessAlive(owner)) return { owner }
      await rm(file, { force: true })
    }
  }
  return { owner: -1 }
}

export class CoreLock extends Context.Service<CoreLock, { readonly pid: number }>()("pedelec/core/CoreLock") {
  /** Fails with CORE_RUNTIME_UNAVAILABLE naming the running Core when the home is already served. */
  static readonly layer = Layer.effect(
    CoreLock,
    Effect.gen(function* () {
      const paths = yield* CorePaths
      yield* Effect.acquireRelease(
        Effect.gen(function* () {
          yield* Effect.promise(() => mkdir(paths.runDir, { recursive: true, mode: 0o700 }))
          const result = yield* Effect.promise(() => take(paths.lockFile))
          if (result !== "taken") {
            const reason = `another Core (pid ${result.owner}) already serves ${paths.home}`
            const message = `Another Pedelec Core (pid ${result.owner}) already serves ${paths.home}. Use that one, stop it first, or set another PEDELEC_HOME.`
            return yield* Effect.fail(
              PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "core", { details: { reason }, message })
            )
          }
        }),
        () => Effect.promise(() => rm(paths.lockFile, { force: true }))
      )
      return CoreLock.of({ pid: process.pid })
    })
  )
}
