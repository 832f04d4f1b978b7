/**
 * RuntimeFile — `run/core.json`, the running Core's announcement, read the one way every client reads it: decoded
 * with contracts' `CoreRuntimeInfo`, the protocol checked first (a Core of another release may have changed the
 * rest), and every way of not having one a coded error whose `details.problem` says which. Writing the file is
 * CoreServer's job; connecting to what it names is CoreClient's; pedelec-cli's effect-free agent path reads only the
 * socket and pid (Reach) and does not come here.
 */
import { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { Component } from "@pedelec/contracts/Protocol"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Schema from "effect/Schema"
import type { CorePathsShape } from "./HomeLayout.ts"
import { isProcessAlive } from "./ProcessAlive.ts"

/** Why there is no announcement to use: no file, a file this user cannot read, or one that is not an announcement. */
export type RuntimeFileProblem = "missing" | "unreadable" | "invalid"

const unavailable = (source: Component, runtimeFile: string, problem: RuntimeFileProblem, reason: string) =>
  PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", source, { details: { reason, runtimeFile, problem } })

const decodeInfo = Schema.decodeUnknownEffect(CoreRuntimeInfo)

const protocolOf = (json: unknown): unknown =>
  typeof json === "object" && json !== null && "protocolVersion" in json ? json.protocolVersion : undefined

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The announcement in `runtimeFile`: CORE_RUNTIME_UNAVAILABLE (`details.problem`: missing, unreadable, invalid), or
 * PROTOCOL_VERSION_MISMATCH when a Core of another protocol wrote it. Whether its pid still runs is `runningCore`'s.
 */
export const readRuntimeInfo = Effect.fn("RuntimeFile.readRuntimeInfo")(function* (
  runtimeFile: string,
  source: Component = "native-host"
) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs
    .readFileString(runtimeFile)
    .pipe(
      Effect.mapError((error) =>
        error.reason._tag === "NotFound"
          ? unavailable(source, runtimeFile, "missing", `no Core is running (${runtimeFile} is missing)`)
          : unavailable(source, runtimeFile, "unreadable", `${runtimeFile} cannot be read (${error.reason._tag})`)
      )
    )
  const json = parseJson(text)
  const version = protocolOf(json)
  if (typeof version === "number" && version !== PROTOCOL_VERSION) {
    return yield* PedelecError.fromCode("PROTOCOL_VERSION_MISMATCH", source, {
      details: { actual: PROTOCOL_VERSION, expected: version, runtimeFile }
    })
  }
  return yield* decodeInfo(json).pipe(
    Effect.mapError(() => unavailable(source, runtimeFile, "invalid", `${runtimeFile} is not a Core announcement`))
  )
})

/** The announcement of a Core that runs now, or undefined: no file, an unusable one, or a dead pid (a crashed Core). */
export const runningCore = (paths: CorePathsShape) =>
  readRuntimeInfo(paths.runtimeFile).pipe(
    Effect.map((info) => (isProcessAlive(info.pid) ? info : undefined)),
    Effect.orElseSucceed(() => undefined)
  )
