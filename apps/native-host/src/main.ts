/**
 * pedelec-native-host — what Chrome starts for `connectNative("com.pedelec.host")`: frames on stdin/stdout, Core
 * reached (or started) through the launcher's PEDELEC_HOME and PEDELEC_CORE_COMMAND. Composition only. Exits 0 when
 * stdin ends (Chrome closed the port), after every subscription and the Core connection are closed.
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { log } from "./Log.ts"
import { NativePort } from "./NativeMessaging.ts"
import * as Relay from "./Relay.ts"
import { ToCore } from "./ToCore.ts"

const services = Layer.mergeAll(NativePort.layer, ToCore.layer)

NodeRuntime.runMain(Relay.run.pipe(Effect.provide(services), Effect.scoped), {
  disableErrorReporting: true,
  teardown: (exit) => {
    if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return process.exit(0)
    log(`failed: ${Cause.pretty(exit.cause)}`)
    process.exit(1)
  }
})
