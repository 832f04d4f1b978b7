/**
 * CoreLock — one Core per Pedelec home: an exclusive `run/core.lock` holding the owner's pid and its start time,
 * taken before the socket is touched and released at stop. A lock whose owner is gone (a crashed or SIGKILLed Core)
 * is taken over, and so is one whose pid now names another process (pids are reused, quickly in a container): the
 * start time tells them apart. A lock with no start time (an older Core's) is trusted on its pid alone. It does not
 * start or find Cores (the headless app and the clients do).
 */
import { mkdir, open, readFile, rm } from "node:fs/promises"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { isProcessAlive } from "@pedelec/core-client/ProcessAlive"
import { identity } from "@pedelec/providers/ProcessTree"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CorePaths } from "./CorePaths.ts"

/** `<pid> <start time>`: the start time is what a later process with the same pid cannot have. */
const ownerLine = async () => {
  const self = await Effect.runPromise(identity(process.pid))
  return self === undefined ? `${process.pid}\n` : `${process.pid} ${self.startTime}\n`
}

/** Whether the lock's line names a process that runs now: the same pid and, when recorded, the same start. */
const heldBy = async (line: string): Promise<number | undefined> => {
  const [pidText = "", startTime] = line.trim().split(" ")
  const owner = Number.parseInt(pidText, 10)
  if (!Number.isInteger(owner) || owner === process.pid || !isProcessAlive(owner)) return undefined
  if (startTime === undefined) return owner
  const running = await Effect.runPromise(identity(owner))
  return running === undefined || running.startTime === startTime ? owner : undefined
}

/** Creates the lock file exclusively; on a stale lock, removes it and tries once more. */
const take = async (file: string): Promise<{ readonly owner: number } | "taken"> => {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, "wx", 0o600)
      await handle.writeFile(await ownerLine())
      await handle.close()
      return "taken"
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const owner = await heldBy(await readFile(file, "utf8").catch(() => ""))
      if (owner !== undefined) return { owner }
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
