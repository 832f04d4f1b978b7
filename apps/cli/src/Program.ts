/**
 * Program — the user commands, loaded lazily by main: gives settings and providers the desktop-role Core link (none
 * for the native-host registration commands), turns every failure into its line (Output) and runs it with
 * NodeRuntime. The agent commands (tool-*) never come here: `Agent` runs them without effect.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Command as AnyCommand } from "./Args.ts"
import type { CliFailure } from "./CliFailure.ts"
import { installNativeHost, uninstallNativeHost } from "./commands/nativeHost.ts"
import { providers } from "./commands/providers.ts"
import { settingsGet, settingsSet } from "./commands/settings.ts"
import { EXIT, emit, failed, type Outcome, toolError } from "./Output.ts"
import { UserCore } from "./ToCore.ts"

type Command = Exclude<AnyCommand, { readonly threadId: string }>

const dispatch = (command: Command, version: string): Effect.Effect<Outcome, CliFailure> => {
  const core = UserCore.layer({ version })
  switch (command._tag) {
    case "SettingsGet":
      return settingsGet(command.json).pipe(Effect.provide(core))
    case "SettingsSet":
      return settingsSet(command.key, command.value, command.json).pipe(Effect.provide(core))
    case "Providers":
      return providers(command.rescan, command.json).pipe(Effect.provide(core))
    case "InstallNativeHost":
      return installNativeHost(command)
    case "UninstallNativeHost":
      return uninstallNativeHost(command)
  }
}

const isJson = (command: Command): boolean => !("json" in command) || command.json

/** A bug, not a refusal: the line says so without a stack trace; PEDELEC_DEBUG=1 puts the cause on stderr. */
const internal = (cause: Cause.Cause<unknown>, json: boolean): Outcome => {
  const error = toolError(
    "INTERNAL_ERROR",
    `pedelec-cli hit an unexpected error (${Cause.squash(cause)}). Retry; if it persists, tell the user.`
  )
  const outcome = failed(error, { exit: EXIT.toolFailed, json })
  return process.env.PEDELEC_DEBUG === "1" ? { ...outcome, stderr: `${Cause.pretty(cause)}\n` } : outcome
}

export const program = (command: Command, version: string) =>
  dispatch(command, version).pipe(
    Effect.catch((failure) => Effect.succeed(failed(failure.error, { exit: failure.exit, json: isJson(command) }))),
    Effect.catchCause((cause) => Effect.succeed(internal(cause, isJson(command)))),
    Effect.flatMap((outcome) => Effect.promise(() => emit(outcome)))
  )

export const run = (command: Command, version: string): void =>
  NodeRuntime.runMain(program(command, version), {
    disableErrorReporting: true,
    teardown: (exit, onExit) =>
      onExit(
        Exit.isSuccess(exit)
          ? typeof exit.value === "number"
            ? exit.value
            : EXIT.ok
          : Cause.hasInterruptsOnly(exit.cause)
            ? 130
            : EXIT.toolFailed
      )
  })
