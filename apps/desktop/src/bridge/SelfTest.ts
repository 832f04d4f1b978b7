/**
 * SelfTest — the self-test's hops the app can run without a browser, against the real parts, one after another and
 * each timed with Effect's Clock: Core answers `desktop.status` over the bridge's own connection; the native host,
 * started from a registered browser's manifest exactly as Chrome starts it, relays one framed `session.list` to Core
 * and exits when its stdin closes; Core lists its providers (no rescan); pedelec-cli prints them for the same home.
 * Every failure is a coded PedelecError and a sentence saying what to do; when Core does not answer, the hops that
 * need it are skipped. Each hop is bounded by HOP_TIMEOUT_MS, and a process it started is killed with its scope.
 * The browser's own hops (extension, approval, a turn with a page tool) are apps/e2e's; registering is NativeHost.ts.
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import path from "node:path"
import * as NodeServices from "@effect/platform-node/NodeServices"
import type { CoreStatus, LocalProvider } from "@pedelec/contracts/Desktop"
import type { SelfTestHop, SelfTestHopName } from "@pedelec/contracts/link/DesktopLink"
import { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { NativeHostConfig } from "../main/NativeHostSetup.ts"
import type { NativeHostShape } from "./NativeHost.ts"

export const HOP_TIMEOUT_MS = 10_000

/** Why a hop failed: the coded error, and what the user does about it. */
export interface HopFailure {
  readonly error: PedelecError
  readonly todo: string
}

export interface SelfTestDeps {
  /** `desktop.status`, as the renderer's calls go (through ToCore). */
  readonly status: Effect.Effect<CoreStatus, PedelecError>
  /** `desktop.providers.list` without a rescan, the same way. */
  readonly providers: Effect.Effect<ReadonlyArray<LocalProvider>, PedelecError>
  readonly host: NativeHostShape
  readonly config: NativeHostConfig | undefined
}

const AGAIN = "then run the self-test again."
const fail = (error: PedelecError, todo: string): Effect.Effect<never, HopFailure> => Effect.fail({ error, todo })
const because =
  (todo: string) =>
  (error: PedelecError): HopFailure => ({ error, todo })

const hostUnavailable = (message: string) =>
  PedelecError.fromCode("NATIVE_HOST_UNAVAILABLE", "desktop", { message, details: { reason: message } })

const timedOut = (what: string, ms: number) =>
  PedelecError.fromCode("INTERNAL_ERROR", "desktop", {
    message: `${what} did not finish within ${ms / 1000} s and was stopped.`,
    details: { component: "desktop", reason: "timeout" }
  })

/** One hop: timed from start to outcome with the Clock, bounded by `timeoutMs`, never failing. */
export const runHop = (
  name: SelfTestHopName,
  hop: Effect.Effect<string, HopFailure>,
  timeoutMs: number = HOP_TIMEOUT_MS
): Effect.Effect<SelfTestHop> =>
  hop.pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () => fail(timedOut(name, timeoutMs), `Something is stuck: quit and reopen Pedelec, ${AGAIN}`)
    }),
    Effect.exit,
    Effect.timed,
    Effect.map(([took, exit]): SelfTestHop => {
      const ms = Duration.toMillis(took)
      if (Exit.isSuccess(exit)) return { name, ok: true, ms, detail: exit.value }
      const found = Cause.findErrorOption(exit.cause)
      const failure: HopFailure =
        found._tag === "Some"
          ? found.value
          : {
              error: PedelecError.fromCode("INTERNAL_ERROR", "desktop", { details: { component: "desktop" } }),
              todo: `Quit and reopen Pedelec, ${AGAIN}`
            }
      return { name, ok: false, ms, error: failure.error.toWire(), todo: failure.todo }
    })
  )

// Native messaging framing: a 4-byte length (little-endian, as on every platform Chrome runs on), then UTF-8 JSON.

export const encodeFrame = (message: unknown): Uint8Array => {
  const body = Buffer.from(JSON.stringify(message), "utf8")
  const frame = Buffer.alloc(4 + body.length)
  frame.writeUInt32LE(body.length, 0)
  body.copy(frame, 4)
  return frame
}

/** Splits off every whole frame in `buffered`; what is left waits for the next chunk. */
export const takeFrames = (buffered: Buffer): readonly [rest: Buffer, frames: ReadonlyArray<string>] => {
  const frames: Array<string> = []
  let rest = buffered
  while (rest.length >= 4 && rest.length >= 4 + rest.readUInt32LE(0)) {
    const length = rest.readUInt32LE(0)
    frames.push(rest.subarray(4, 4 + length).toString("utf8"))
    rest = rest.subarray(4 + length)
  }
  return [rest, frames]
}

const frames = <E>(bytes: Stream.Stream<Uint8Array, E>) =>
  bytes.pipe(
    Stream.mapAccum(
      (): Buffer => Buffer.alloc(0),
      (rest: Buffer, chunk: Uint8Array) => takeFrames(Buffer.concat([rest, chunk]))
    )
  )

/** What a browser reads from its manifest to start the host: the launcher and the origin it passes. */
export const launchOf = (manifest: string): { readonly launcher: string; readonly origin: string } | undefined => {
  try {
    const parsed = JSON.parse(manifest) as { readonly path?: unknown; readonly allowed_origins?: unknown }
    const origins = Array.isArray(parsed.allowed_origins) ? parsed.allowed_origins : []
    const origin = origins.find((value): value is string => typeof value === "string")
    return typeof parsed.path === "string" && origin !== undefined ? { launcher: parsed.path, origin } : undefined
  } catch {
    return undefined
  }
}

const REGISTER = `Register the native host for your browser above, ${AGAIN}`
const REPAIR = `Press Register (or Repair) for that browser above to write the launcher again, ${AGAIN}`

/** The launcher and origin of the first registered browser, or the failure that says there is none. */
const registered = (host: NativeHostShape) =>
  Effect.gen(function* () {
    const status = yield* host.status.pipe(Effect.mapError(because(`Open Health in the desktop app, ${AGAIN}`)))
    const row = status.browsers.find((browser) => browser.state === "registered")
    if (row === undefined) {
      const seen = status.browsers.length === 0 ? "no browser was found" : "no browser has it registered"
      return yield* fail(hostUnavailable(`The native host cannot be started: ${seen}.`), REGISTER)
    }
    const text = yield* Effect.promise(() => readFile(row.manifestFile, "utf8").catch(() => ""))
    const launch = launchOf(text)
    if (launch === undefined) return yield* fail(hostUnavailable(`${row.manifestFile} names no launcher.`), REPAIR)
    return { browser: row.browser, ...launch }
  })

const HOST_REQUEST = { kind: "request", id: "self-test", method: "session.list", params: {} } as const

/** Reads the host's answer to HOST_REQUEST: the live sessions it relayed from Core, or Core's error. */
const answerOf = (text: string) =>
  Effect.gen(function* () {
    const answer = JSON.parse(text) as {
      readonly ok?: boolean
      readonly result?: unknown
      readonly error?: { readonly code?: string; readonly message?: string }
    }
    if (answer.ok === true && Array.isArray(answer.result)) return answer.result.length
    const wire = yield* Schema.decodeUnknownEffect(PedelecError)({ _tag: "PedelecError", ...answer.error }).pipe(
      Effect.orElseSucceed(() => undefined)
    )
    const error =
      wire ?? PedelecError.fromCode("PROTOCOL_ERROR", "desktop", { details: { reason: text.slice(0, 200) } })
    return yield* fail(error, `The host started but Core refused it: fix what the message says, ${AGAIN}`)
  })

/** Starts the launcher as Chrome does, sends one frame, reads one, then closes stdin and waits for the exit. */
const exchange = (spawner: ChildProcessSpawner.ChildProcessSpawner["Service"], launcher: string, origin: string) =>
  Effect.gen(function* () {
    const answered = yield* Deferred.make<void>()
    const stdin = Stream.make(encodeFrame(HOST_REQUEST)).pipe(
      Stream.concat(Stream.fromEffectDrain(Deferred.await(answered)))
    )
    const handle = yield* spawner
      .spawn(
        ChildProcess.make(launcher, [origin], {
          extendEnv: true,
          stdin: { stream: stdin, endOnDone: true },
          stderr: "ignore",
          killSignal: "SIGTERM",
          forceKillAfter: "1 second"
        })
      )
      .pipe(
        Effect.mapError((error) => ({
          error: hostUnavailable(`${launcher} could not start: ${error.message}`),
          todo: REPAIR
        }))
      )
    const first = yield* frames(handle.stdout).pipe(
      Stream.runHead,
      Effect.orElseSucceed(() => undefined)
    )
    yield* Deferred.succeed(answered, undefined)
    if (first === undefined || first._tag === "None") {
      return yield* fail(hostUnavailable(`${launcher} exited without answering.`), REPAIR)
    }
    const sessions = yield* answerOf(first.value)
    const code = yield* handle.exitCode.pipe(Effect.orElseSucceed(() => undefined))
    return { sessions, pid: handle.pid as number, code }
  }).pipe(Effect.scoped)

export const nativeHostHop = (deps: Pick<SelfTestDeps, "host">) =>
  Effect.gen(function* () {
    const { browser, launcher, origin } = yield* registered(deps.host)
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const { sessions, code } = yield* exchange(spawner, launcher, origin)
    const exited = code === undefined ? "killed" : `exited ${code}`
    return `${browser}'s launcher relayed session.list to Core: ${sessions} live session${sessions === 1 ? "" : "s"} (host ${exited})`
  }).pipe(Effect.provide(NodeServices.layer))

/** "2 of 8 ready: scripted, codex"; none ready is a failure, since no session could start. */
const providersHop = (deps: SelfTestDeps) =>
  Effect.gen(function* () {
    const list = yield* deps.providers.pipe(Effect.mapError(because(`Check the Core hop above, ${AGAIN}`)))
    const ready = list.filter((provider) => provider.available).map((provider) => provider.code)
    if (ready.length === 0) {
      const message = `None of the ${list.length} providers Core looks for is ready.`
      const error = PedelecError.fromCode("PROVIDER_UNAVAILABLE", "desktop", { message })
      return yield* fail(error, `Install one (the Providers screen says how), press Rescan there, ${AGAIN}`)
    }
    return `${ready.length} of ${list.length} ready: ${ready.join(", ")}`
  })

/** pedelec-cli as an agent would find it: `PEDELEC_BIN_DIR` (a packaged app), else beside the Core in the repository. */
export const cliCandidates = (config: NativeHostConfig): ReadonlyArray<string> => {
  const binDir = config.env.PEDELEC_BIN_DIR
  const beside = path.resolve(path.dirname(config.coreCommand), "../../cli/bin/pedelec-cli")
  return [...(binDir === undefined || binDir === "" ? [] : [path.join(binDir, "pedelec-cli")]), beside]
}

const cliHop = (config: NativeHostConfig | undefined) =>
  Effect.gen(function* () {
    if (config === undefined) {
      return yield* fail(
        hostUnavailable("This window's bridge does not know where pedelec-cli is."),
        `Open Health in the desktop app, ${AGAIN}`
      )
    }
    const candidates = cliCandidates(config)
    const cli = candidates.find((file) => existsSync(file))
    if (cli === undefined) {
      const message = `pedelec-cli is missing: looked for ${candidates.join(" and ")}.`
      const error = PedelecError.fromCode("INTERNAL_ERROR", "desktop", { message, details: { component: "desktop" } })
      return yield* fail(error, `Reinstall Pedelec (in the repository: \`npm run build\`), ${AGAIN}`)
    }
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const env = { PEDELEC_HOME: config.pedelecHome, ...(config.electronRunAsNode ? { ELECTRON_RUN_AS_NODE: "1" } : {}) }
    const stdout = yield* spawner
      .string(ChildProcess.make(config.nodePath, [cli, "providers", "--json"], { env, extendEnv: true }))
      .pipe(
        Effect.mapError((error) => ({
          error: hostUnavailable(`${cli} could not start: ${error.message}`),
          todo: `Reinstall Pedelec, ${AGAIN}`
        }))
      )
    return yield* cliOutcome(stdout)
  }).pipe(Effect.provide(NodeServices.layer))

/** What the one JSON line pedelec-cli printed says. */
export const cliOutcome = (stdout: string): Effect.Effect<string, HopFailure> => {
  const line = stdout.trim().split("\n").at(-1) ?? ""
  return Schema.decodeUnknownEffect(Schema.fromJsonString(CliOutput))(line).pipe(
    Effect.mapError(
      (): HopFailure => ({
        error: PedelecError.fromCode("PROTOCOL_ERROR", "desktop", {
          details: { reason: `pedelec-cli printed ${JSON.stringify(line.slice(0, 200))}` }
        }),
        todo: `Reinstall Pedelec so the app and pedelec-cli are the same release, ${AGAIN}`
      })
    ),
    Effect.flatMap((output) => {
      if (!output.ok) {
        const { code, message, details } = output.error
        const error = PedelecError.fromCode(code, "cli", { message, ...(details === undefined ? {} : { details }) })
        return fail(error, `pedelec-cli could not use Core for this home: fix what the message says, ${AGAIN}`)
      }
      const count = "result" in output && Array.isArray(output.result) ? output.result.length : 0
      return Effect.succeed(`pedelec-cli providers --json listed ${count} providers for this home`)
    })
  )
}

const coreHop = (deps: SelfTestDeps) =>
  deps.status.pipe(
    Effect.map((status) => `desktop.status: Core ${status.coreVersion}, pid ${status.pid}`),
    Effect.mapError(because(`Quit and reopen Pedelec (it starts Core), or run \`pedelec-core\`, ${AGAIN}`))
  )

const skipped = (name: SelfTestHopName): SelfTestHop => ({
  name,
  ok: false,
  skipped: true,
  detail: "Not run: it needs Core, which did not answer."
})

/** Every hop in order; after a failed Core hop the others are skipped, since each of them goes through Core. */
export const runSelfTest = Effect.fn("SelfTest.run")(function* (deps: SelfTestDeps) {
  const core = yield* runHop("Core answers", coreHop(deps))
  const rest = [
    ["Native host answers", nativeHostHop(deps)],
    ["Providers found", providersHop(deps)],
    ["pedelec-cli reaches Core", cliHop(deps.config)]
  ] as const
  if (!core.ok) return [core, ...rest.map(([name]) => skipped(name))]
  const others = yield* Effect.forEach(rest, ([name, hop]) => runHop(name, hop))
  return [core, ...others]
})
