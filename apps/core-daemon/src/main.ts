/**
 * pedelec-core — the headless Core: the same Core layer the desktop app embeds, as a plain Node daemon for tests,
 * CI, Linux servers and the native host's auto-start. `--detach` starts a copy in its own session and returns once
 * it answers; `--on-demand` exits after 10 idle minutes without a session. SIGTERM/SIGINT end every session, kill
 * their processes and remove the socket. Composition only: Core's behaviour is in libs/core.
 */
import { NodeRuntime } from "@effect/platform-node"
import { CoreConfig } from "@pedelec/core/CoreConfig"
import { CoreLayerNoDeps } from "@pedelec/core/CoreLayer"
import { CorePaths } from "@pedelec/core/CorePaths"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { parseArgs, USAGE } from "./Args.ts"
import { detach } from "./Detach.ts"
import { IdleExit } from "./IdleExit.ts"
import { defaultBinDir } from "./Layout.ts"

const args = parseArgs(process.argv.slice(2))

if (args.kind === "usage") {
  process.stderr.write(`${args.error ? `pedelec-core: ${args.error}\n\n` : ""}${USAGE}`)
  process.exitCode = args.error ? 2 : 0
} else if (args.kind === "detach") {
  process.exitCode = await detach(args)
} else {
  const config = CoreConfig.layerWith({ binDir: process.env.PEDELEC_BIN_DIR ?? defaultBinDir() })
  const paths = args.home ? CorePaths.layerFor(args.home) : CorePaths.layer
  const core = CoreLayerNoDeps.pipe(Layer.provideMerge(Layer.mergeAll(paths, config)))
  const app = args.onDemand ? IdleExit.layer.pipe(Layer.provideMerge(core)) : core
  // Printed once the socket listens: what `--detach` and tests wait for.
  const ready = Layer.effectDiscard(
    Effect.sync(() => process.stderr.write(`pedelec-core: ready (pid ${process.pid})\n`))
  )
  NodeRuntime.runMain(Layer.launch(ready.pipe(Layer.provideMerge(app))), {
    disableErrorReporting: true,
    // SIGTERM/SIGINT is how a Core is asked to stop: a clean stop exits 0. A failure is one line on stderr.
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return onExit(0)
      const error = Cause.squash(exit.cause)
      process.stderr.write(`pedelec-core: ${error instanceof Error ? error.message : String(error)}\n`)
      onExit(1)
    }
  })
}
