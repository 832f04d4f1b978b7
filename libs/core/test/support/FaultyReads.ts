/**
 * FaultyReads — the real file system, except that reading one file (by base name) fails with a given errno, the way
 * Node reports it (a PlatformError whose cause carries `code`). For the read failures a real disk cannot be made to
 * give on demand: EIO, and EACCES, which root ignores. It fails only `readFileString`, the stores' one read. Also
 * `codedFailure`, which is what those tests assert: the call failed with a PedelecError, not a defect.
 */
import path from "node:path"
import { assert } from "@effect/vitest"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as PlatformError from "effect/PlatformError"

export interface ReadFault {
  /** The base name whose reads fail, e.g. "settings.json". */
  readonly name: string
  readonly errno: string
  readonly tag: PlatformError.SystemErrorTag
}

export const EIO = (name: string): ReadFault => ({ name, errno: "EIO", tag: "Unknown" })
export const EACCES = (name: string): ReadFault => ({ name, errno: "EACCES", tag: "PermissionDenied" })

const failedRead = (file: string, fault: ReadFault) =>
  PlatformError.systemError({
    _tag: fault.tag,
    module: "FileSystem",
    method: "readFile",
    syscall: "read",
    pathOrDescriptor: file,
    cause: Object.assign(new Error(`${fault.errno}: read ${file}`), { code: fault.errno })
  })

/** A FileSystem over the one it is provided with; `undefined` fails nothing. */
export const faultyReads = (fault: ReadFault | undefined) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (fs) =>
      fault === undefined
        ? fs
        : {
            ...fs,
            readFileString: (file: string, encoding?: string) =>
              path.basename(file) === fault.name
                ? Effect.fail(failedRead(file, fault))
                : fs.readFileString(file, encoding)
          }
    )
  )

/** The failure of `effect`, which must be a coded PedelecError: a defect or a success fails the test. */
export const codedFailure = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(effect)
    if (Exit.isSuccess(exit)) return assert.fail("expected a failure, got a success")
    const error = Cause.findErrorOption(exit.cause)
    if (error._tag === "None" || !(error.value instanceof PedelecError))
      return assert.fail(`expected a coded failure, got ${Cause.pretty(exit.cause).slice(0, 400)}`)
    return error.value
  })
