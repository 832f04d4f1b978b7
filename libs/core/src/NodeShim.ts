/**
 * NodeShim — a `node` for the agents of a Core that runs without one on the machine: under the desktop app Core runs
 * on Electron's own runtime (`ELECTRON_RUN_AS_NODE=1`), and pedelec-cli, pedelec-deno and pedelec-agent start with
 * `#!/usr/bin/env node`. So such a Core writes `run/node-shim/node` (`node.cmd` on Windows), which runs this very
 * runtime as Node, and its folder goes LAST on every agent's PATH: a user's own node, found earlier, still wins.
 * On when Core runs on Electron or `PEDELEC_PROVIDE_NODE=1`; off otherwise (a Core started with node has one).
 * Putting the folder on the PATH is the agent environment's job (Sessions/Turns); this only writes the file.
 */
import path from "node:path"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import { CorePaths } from "./CorePaths.ts"

const wanted = Config.String("PEDELEC_PROVIDE_NODE").pipe(
  Config.map((value) => value === "1"),
  Config.withDefault(false),
  Config.map((asked) => asked || process.versions.electron !== undefined)
)

/** A POSIX shell single-quoted word: the runtime's path may hold spaces or quotes. */
const quoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`

const shimOf = (platform: NodeJS.Platform, runtime: string) =>
  platform === "win32"
    ? { name: "node.cmd", text: `@set ELECTRON_RUN_AS_NODE=1\r\n@"${runtime}" %*\r\n` }
    : { name: "node", text: `#!/bin/sh\nELECTRON_RUN_AS_NODE=1 exec ${quoted(runtime)} "$@"\n` }

const write = Effect.fnUntraced(function* (dir: string) {
  const fs = yield* FileSystem.FileSystem
  const shim = shimOf(process.platform, process.execPath)
  const file = path.join(dir, shim.name)
  yield* fs.makeDirectory(dir, { recursive: true, mode: 0o700 })
  yield* fs.writeFileString(file, shim.text, { mode: 0o700 })
  yield* fs.chmod(file, 0o700)
  return dir
})

export class NodeShim extends Context.Service<NodeShim, { readonly dir: string | undefined }>()(
  "pedelec/core/NodeShim"
) {
  static readonly layer = Layer.effect(
    NodeShim,
    Effect.gen(function* () {
      if (!(yield* wanted.pipe(Effect.orDie))) return NodeShim.of({ dir: undefined })
      const dir = path.join((yield* CorePaths).runDir, "node-shim")
      const written = yield* write(dir).pipe(
        Effect.mapError((cause) =>
          PedelecError.fromCode("CORE_RUNTIME_UNAVAILABLE", "core", {
            details: { reason: `the agents' node (${dir}) could not be written: ${cause.message}` }
          })
        )
      )
      return NodeShim.of({ dir: written })
    })
  )
}
