/**
 * ToCore — pedelec-cli's link to Core: finds the running Core through `run/core.json` (CorePaths), connects to its
 * socket with effect/rpc (NDJSON), says `core.hello` (PROTOCOL_VERSION), and proves a role on every request with a
 * client middleware: the agent role (`PEDELEC_SESSION_CAP`) or the host role (core.json's launch secret). Every way
 * of not reaching Core becomes a CliFailure that says what to do; tool results are the commands' business.
 */
import { readFile } from "node:fs/promises"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import { SessionCapability, SessionId } from "@pedelec/contracts/Ids"
import { AgentAuth, AgentRpcs, type ToolSpec, type ToolSummary } from "@pedelec/contracts/node/AgentLink"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { AUTH_HEADERS, CoreRuntimeInfo, HelloRpcs, HostAuth, HostRpcs } from "@pedelec/contracts/node/CoreLink"
import type { ErrorDetails, PedelecError } from "@pedelec/contracts/PedelecError"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import type { ProviderInfo } from "@pedelec/contracts/Provider"
import type { PublicSettings, SecretName, Settings } from "@pedelec/contracts/Settings"
import type { ToolName } from "@pedelec/contracts/Tool"
import { type CorePathsShape, resolveCorePaths } from "@pedelec/core/CorePaths"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as Layer from "effect/Layer"
import * as RpcClient from "effect/rpc/RpcClient"
import type { RpcClientError } from "effect/rpc/RpcClientError"
import * as RpcMiddleware from "effect/rpc/RpcMiddleware"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as Schema from "effect/Schema"
import * as Socket from "effect/socket/Socket"
import { CliFailure } from "./CliFailure.ts"

/** How long Core may take to answer the hello before the CLI calls it unresponsive. */
const HELLO_TIMEOUT = "10 seconds"

export interface Link {
  /** This CLI's version, sent in the hello. */
  readonly version: string
  /** Defaults to this process's `PEDELEC_HOME` (or `~/.pedelec`). */
  readonly paths?: CorePathsShape
}

// ---------------------------------------------------------------------------------------------------------------
// core.json and the socket

const unavailable = (message: string, details: ErrorDetails) =>
  CliFailure.of("CORE_RUNTIME_UNAVAILABLE", message, details)

const START_CORE = "Ask the user to start the Pedelec desktop app (or the headless `pedelec-core`), then retry."

const decodeRuntime = Schema.decodeUnknownResult(CoreRuntimeInfo)

/** Reads `run/core.json`: no file means no Core. Checks the protocol before the rest, which may have changed. */
const readRuntimeInfo = Effect.fnUntraced(function* (paths: CorePathsShape) {
  const file = paths.runtimeFile
  const raw = yield* Effect.tryPromise({
    try: () => readFile(file, "utf8"),
    catch: (cause) => {
      const code = errnoOf(cause)
      return code === "ENOENT"
        ? unavailable(`Pedelec is not running: there is no ${file}. ${START_CORE}`, { runtimeFile: file })
        : unavailable(
            `Cannot read ${file} (${code ?? String(cause)}). Run the agent as the user who runs Pedelec, or ask the user to restart Pedelec.`,
            { runtimeFile: file }
          )
    }
  })
  const invalid = unavailable(`${file} is not a Pedelec runtime file. Ask the user to restart Pedelec.`, {
    runtimeFile: file
  })
  const json = yield* Effect.try({ try: (): unknown => JSON.parse(raw), catch: () => invalid })
  const version =
    typeof json === "object" && json !== null ? (json as { protocolVersion?: unknown }).protocolVersion : 0
  if (typeof version === "number" && version !== PROTOCOL_VERSION) return yield* Effect.fail(mismatch(version))
  const decoded = decodeRuntime(json)
  if (decoded._tag === "Failure") return yield* Effect.fail(invalid)
  return decoded.success
})

const mismatch = (actual: number) =>
  CliFailure.of(
    "PROTOCOL_VERSION_MISMATCH",
    `pedelec-cli speaks protocol ${PROTOCOL_VERSION} but the running Pedelec speaks ${actual}. Tell the user to update Pedelec so the CLI and the desktop app are the same release.`,
    { expected: PROTOCOL_VERSION, actual }
  )

const errnoOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && typeof (u as { code?: unknown }).code === "string"
    ? (u as { code: string }).code
    : undefined

const protocol = (socketPath: string) =>
  RpcClient.layerProtocolSocket().pipe(
    // makeNet dials lazily and cannot fail here; layerNet's type would say it can.
    Layer.provide(Layer.effect(Socket.Socket, NodeSocket.makeNet({ path: socketPath, openTimeout: "5 seconds" }))),
    Layer.provide(RpcSerialization.layerNdjson)
  )

/** Sends one proof header on every request of the group the middleware guards. */
const proving = <Id extends RpcMiddleware.AnyId, S>(tag: Context.Key<Id, S>, header: string, value: string) =>
  RpcMiddleware.layerClient(tag, ({ request, next }) =>
    next({ ...request, headers: Headers.set(request.headers, header, value) })
  )

// ---------------------------------------------------------------------------------------------------------------
// Errors

/** Core's own refusals keep Core's words, except where an agent needs other advice than a page would. */
const agentAdvice = (error: PedelecError, sessionId: SessionId): string | undefined => {
  switch (error.code) {
    case "UNAUTHORIZED":
      return `Pedelec refused this agent's capability for session ${sessionId}: the session has ended, or PEDELEC_SESSION_CAP and the thread id belong to different sessions. Use the PEDELEC_THREAD_ID and PEDELEC_SESSION_CAP your shell was started with; if they are unchanged, stop using Pedelec tools and tell the user.`
    case "SESSION_NOT_FOUND":
      return `Pedelec has no session ${sessionId}. Check the thread id (PEDELEC_THREAD_ID); if it is right, the session is gone: tell the user.`
    case "SESSION_ENDED":
      return `Session ${sessionId} has ended, so its tools can no longer be called. Stop using Pedelec tools and tell the user.`
    default:
      return undefined
  }
}

const fromPedelecError = (error: PedelecError, message?: string) =>
  CliFailure.of(error.code, message ?? error.message, error.details)

/** The hello got no answer: something holds the socket but does not speak. */
interface HelloTimeout {
  readonly _tag: "HelloTimeout"
}

type ClientFailure = PedelecError | RpcClientError | HelloTimeout

/** One mapping for everything a call can fail with. */
const toFailure =
  (at: Endpoint, sessionId?: SessionId) =>
  (error: ClientFailure): CliFailure => {
    if (error._tag === "PedelecError")
      return fromPedelecError(error, sessionId === undefined ? undefined : agentAdvice(error, sessionId))
    return connectFailure(error, at)
  }

/** Where the CLI tried to reach Core, from core.json. */
export interface Endpoint {
  readonly socketPath: string
  readonly pid: number
}

const SANDBOX_FIX =
  "allow network/local-socket access for this agent, e.g. codex `-c sandbox_workspace_write.network_access=true`"

/** Not reaching Core, by cause: each message says what to do. Exported for the unit test of the EPERM case. */
export const connectFailure = (error: RpcClientError | HelloTimeout, at: Endpoint): CliFailure => {
  const details = { socketPath: at.socketPath }
  if (error._tag === "HelloTimeout")
    return unavailable(
      `The Pedelec runtime at ${at.socketPath} accepted the connection but did not answer within ${HELLO_TIMEOUT}. Ask the user to restart Pedelec, then retry.`,
      details
    )
  const reason = error.reason
  if (reason._tag === "SocketOpenError") return openFailure(reason.kind, reason.cause, at)
  if (reason._tag === "RpcClientDefect")
    return CliFailure.of(
      "PROTOCOL_ERROR",
      "The running Pedelec sent a message this pedelec-cli cannot read. Tell the user to update Pedelec so the CLI and the desktop app are the same release.",
      { ...details, cause: reason.message }
    )
  // The request may have reached Core (and a tool call the page) before the connection dropped.
  return unavailable(
    `The connection to the Pedelec runtime at ${at.socketPath} closed before it answered (Core stopped or restarted), so a tool call may or may not have reached the page. Check before repeating a call that changes things; if Pedelec stays unreachable, tell the user.`,
    { ...details, cause: error.message }
  )
}

const openFailure = (kind: "Unknown" | "Timeout", cause: unknown, at: Endpoint): CliFailure => {
  const errno = kind === "Timeout" ? "ETIMEDOUT" : (errnoOf(cause) ?? "UNKNOWN")
  const system = cause instanceof Error ? cause.message : String(cause)
  const details = { socketPath: at.socketPath, errno, syscall: "connect", cause: system }
  switch (errno) {
    case "EPERM":
      return unavailable(
        `Pedelec cannot be reached from here: this agent's sandbox blocks local sockets (connect EPERM on ${at.socketPath}). Tell the user to ${SANDBOX_FIX}, then retry. Do not try to work around it.`,
        { ...details, fix: SANDBOX_FIX }
      )
    case "EACCES":
      return unavailable(
        `Permission denied connecting to the Pedelec runtime at ${at.socketPath}. Either this agent's sandbox blocks local sockets (tell the user to ${SANDBOX_FIX}), or the socket belongs to another user (run the agent as the user who runs Pedelec).`,
        { ...details, fix: SANDBOX_FIX }
      )
    default: {
      const stale = pidAlive(at.pid) ? "" : ` (run/core.json is stale: its process ${at.pid} has exited)`
      return unavailable(
        `Pedelec is not running: nothing accepts connections at ${at.socketPath} (${errno})${stale}. ${START_CORE}`,
        { ...details, pid: at.pid }
      )
    }
  }
}

/** `kill(pid, 0)`: EPERM means the process exists under another user. Only asked once connecting failed. */
const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errnoOf(error) === "EPERM"
  }
}

const hello = <E>(
  call: (hello: {
    readonly protocolVersion: number
    readonly component: "cli"
    readonly version: string
  }) => Effect.Effect<{ readonly protocolVersion: number }, E>,
  version: string
) =>
  call({ protocolVersion: PROTOCOL_VERSION, component: "cli", version }).pipe(
    Effect.timeoutOrElse({
      duration: HELLO_TIMEOUT,
      orElse: () => Effect.fail<HelloTimeout>({ _tag: "HelloTimeout" })
    }),
    Effect.flatMap((welcome) =>
      welcome.protocolVersion === PROTOCOL_VERSION ? Effect.void : Effect.fail(mismatch(welcome.protocolVersion))
    )
  )

// ---------------------------------------------------------------------------------------------------------------
// Agent role

const AgentGroup = HelloRpcs.merge(AgentRpcs)

export interface AgentCoreShape {
  readonly sessionId: SessionId
  readonly list: Effect.Effect<ReadonlyArray<ToolSummary>, CliFailure>
  readonly spec: (name: ToolName) => Effect.Effect<ToolSpec, CliFailure>
  readonly call: (name: ToolName, args: Schema.Json) => Effect.Effect<CliOutput, CliFailure>
}

export interface AgentOptions extends Link {
  readonly threadId: string
  /** `PEDELEC_SESSION_CAP`, as the environment gave it. */
  readonly capability: string | undefined
}

const decodeSessionId = Schema.decodeUnknownResult(SessionId)
const decodeCapability = Schema.decodeUnknownResult(SessionCapability)

const agentProof = Effect.fnUntraced(function* (options: AgentOptions) {
  const sessionId = decodeSessionId(options.threadId)
  if (sessionId._tag === "Failure")
    return yield* CliFailure.usage(
      "INVALID_INPUT",
      `${JSON.stringify(options.threadId)} is not a Pedelec thread id. Use the PEDELEC_THREAD_ID of your session.`
    )
  if (options.capability === undefined || options.capability === "")
    return yield* CliFailure.of(
      "UNAUTHORIZED",
      "PEDELEC_SESSION_CAP is not set in this shell, so Pedelec cannot tell which session you act for. Run pedelec-cli from the shell of the agent session Pedelec started; if your shell drops environment variables, tell the user."
    )
  const capability = decodeCapability(options.capability)
  if (capability._tag === "Failure")
    return yield* CliFailure.of(
      "UNAUTHORIZED",
      "PEDELEC_SESSION_CAP is not a Pedelec session capability. Run pedelec-cli from the shell of the agent session Pedelec started, with its environment unchanged."
    )
  return { sessionId: sessionId.success, capability: capability.success }
})

export class AgentCore extends Context.Service<AgentCore, AgentCoreShape>()("pedelec/cli/AgentCore") {
  /** Checks the proof, reads core.json, connects and says hello; fails with what the agent should do. */
  static readonly layer = (options: AgentOptions): Layer.Layer<AgentCore, CliFailure> =>
    Layer.unwrap(
      Effect.gen(function* () {
        const { sessionId, capability } = yield* agentProof(options)
        const info = yield* readRuntimeInfo(options.paths ?? resolveCorePaths())
        const failure = toFailure(info, sessionId)
        const make = Effect.gen(function* () {
          const client = yield* RpcClient.make(AgentGroup)
          yield* hello(client["core.hello"], options.version).pipe(Effect.mapError(asFailure(failure)))
          const onThread = { sessionId }
          return AgentCore.of({
            sessionId,
            list: client["tool.list"](onThread).pipe(Effect.mapError(failure)),
            spec: (name) => client["tool.spec"]({ ...onThread, name }).pipe(Effect.mapError(failure)),
            call: (name, args) => client["tool.call"]({ ...onThread, name, args }).pipe(Effect.mapError(failure))
          })
        })
        return Layer.effect(AgentCore, make).pipe(
          Layer.provide(protocol(info.socketPath)),
          Layer.provide(proving(AgentAuth, AUTH_HEADERS.sessionCap, capability))
        )
      })
    )
}

/** The hello can also fail with a CliFailure of its own (a protocol mismatch), which passes through unchanged. */
const asFailure =
  (failure: (error: ClientFailure) => CliFailure) =>
  (error: ClientFailure | CliFailure): CliFailure =>
    error._tag === "CliFailure" ? error : failure(error)

// ---------------------------------------------------------------------------------------------------------------
// Host role

const HostGroup = HelloRpcs.merge(HostRpcs)

export interface HostCoreShape {
  readonly settings: Effect.Effect<PublicSettings, CliFailure>
  readonly setSettings: (settings: Settings) => Effect.Effect<PublicSettings, CliFailure>
  readonly setSecret: (name: SecretName, value: string | null) => Effect.Effect<PublicSettings, CliFailure>
  readonly providers: (rescan: boolean) => Effect.Effect<ReadonlyArray<ProviderInfo>, CliFailure>
}

export class HostCore extends Context.Service<HostCore, HostCoreShape>()("pedelec/cli/HostCore") {
  /** Proves the host role with core.json's per-launch secret, as the native host does. */
  static readonly layer = (options: Link): Layer.Layer<HostCore, CliFailure> =>
    Layer.unwrap(
      Effect.gen(function* () {
        const info = yield* readRuntimeInfo(options.paths ?? resolveCorePaths())
        const failure = toFailure(info)
        const make = Effect.gen(function* () {
          const client = yield* RpcClient.make(HostGroup)
          yield* hello(client["core.hello"], options.version).pipe(Effect.mapError(asFailure(failure)))
          return HostCore.of({
            settings: client["settings.get"]().pipe(Effect.mapError(failure)),
            setSettings: (settings) => client["settings.set"]({ settings }).pipe(Effect.mapError(failure)),
            setSecret: (name, value) => client["settings.set_secret"]({ name, value }).pipe(Effect.mapError(failure)),
            providers: (rescan) => client["providers.list"]({ rescan }).pipe(Effect.mapError(failure))
          })
        })
        return Layer.effect(HostCore, make).pipe(
          Layer.provide(protocol(info.socketPath)),
          Layer.provide(proving(HostAuth, AUTH_HEADERS.launchSecret, info.launchSecret))
        )
      })
    )
}
