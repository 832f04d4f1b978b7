/**
 * FakeCore — a stand-in for the real Core in the CLI's tests: an effect/rpc server on a real Unix socket (NDJSON)
 * serving `core.hello`, the agent role (capability checked by an `AgentAuth` server middleware) and the desktop
 * role's settings and providers (launch secret checked by `DesktopAuth`), with canned tools. It writes `run/core.json` (0600)
 * into a temp PEDELEC_HOME and records what the CLI sent, so tests can assert what reached Core.
 */

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import type { LocalProvider } from "@pedelec/contracts/Desktop"
import type { LaunchSecret, SessionCapability, SessionId } from "@pedelec/contracts/Ids"
import { AgentAuth, AgentCaller, AgentRpcs, type ToolSpec } from "@pedelec/contracts/node/AgentLink"
import type { CliOutput } from "@pedelec/contracts/node/CliOutput"
import { AUTH_HEADERS, type CoreRuntimeInfo, HelloRpcs } from "@pedelec/contracts/node/CoreLink"
import { DesktopAuth, DesktopCaller, DesktopRpcs } from "@pedelec/contracts/node/DesktopRole"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import { DEFAULT_SETTINGS, type PublicSettings, type SecretName } from "@pedelec/contracts/Settings"
import { pathsForHome } from "@pedelec/core-client/HomeLayout"
import { layerNdjson } from "@pedelec/core-client/Ndjson"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as RpcServer from "effect/rpc/RpcServer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

export const SESSION_ID = "sess_0123456789abcdefghijKL" as SessionId
export const CAPABILITY = "cap_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG" as SessionCapability
export const LAUNCH_SECRET = "ls_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG" as LaunchSecret
export const ENDED_SESSION_ID = "sess_ended_0123456789abcdef" as SessionId

const core = (code: Parameters<typeof PedelecError.fromCode>[0], details?: PedelecError["details"]) =>
  PedelecError.fromCode(code, "core", details === undefined ? {} : { details })

const TOOLS: ReadonlyArray<ToolSpec> = [
  {
    name: "echo",
    description: "Returns its arguments.",
    timeoutMs: 60_000,
    annotations: { readOnly: true },
    argsSchema: { type: "object", properties: { text: { type: "string" } }, additionalProperties: false }
  },
  { name: "fail", description: "The page's handler throws.", timeoutMs: 60_000, argsSchema: { type: "object" } },
  { name: "big", description: "Returns more than 32 KiB.", timeoutMs: 60_000, argsSchema: { type: "object" } },
  { name: "slow", description: "Never answers.", timeoutMs: 600_000, argsSchema: { type: "object" } }
]

export const BIG_RESULT: CliOutput = {
  ok: true,
  resultFile: "/ws/.pedelec-runtime/tmp/call_big_0001.json",
  bytes: 40_000,
  preview: '{"rows":[1,2,3'
}

export const PROVIDERS: ReadonlyArray<LocalProvider> = [
  {
    code: "codex",
    name: "Codex CLI",
    available: true,
    version: "0.171.0",
    error: null,
    experimental: false,
    effort: { supported: true },
    location: "/opt/codex/bin/codex"
  },
  {
    code: "cursor",
    name: "Cursor Agent",
    available: false,
    version: null,
    error: "cursor-agent was not found on PATH",
    experimental: true,
    effort: { supported: false, note: "no reasoning flag" },
    location: null
  }
]

/** What the CLI made Core do, for assertions. */
export interface Recorded {
  readonly hellos: Array<{ readonly component: string; readonly version: string }>
  readonly calls: Array<{ readonly name: string; readonly args: unknown }>
  readonly interrupted: Array<string>
  settingsSets: number
  readonly secrets: Record<string, string | null>
  readonly rescans: Array<boolean>
}

export interface FakeCoreOptions {
  /** The protocol version the hello answers with. */
  readonly welcomeVersion?: number
  /** Refuse the hello itself with PROTOCOL_VERSION_MISMATCH. */
  readonly refuseHello?: boolean
  /** What `deno.prepare` answers (the workspace must exist); without it, the session has no workspace here. */
  readonly deno?: { readonly workspace: string; readonly timeoutMs?: number; readonly outputBytes?: number }
}

export interface FakeCore {
  readonly home: string
  readonly socketPath: string
  readonly runtime: CoreRuntimeInfo
  readonly recorded: Recorded
  readonly close: () => Promise<void>
}

const settingsState = (): { current: PublicSettings } => ({
  current: { ...DEFAULT_SETTINGS, secretsSet: { ollamaApiKey: false } }
})

const handlers = (recorded: Recorded, options: FakeCoreOptions) => {
  const state = settingsState()
  const storeSecret = (name: SecretName, value: string | null) => {
    recorded.secrets[name] = value
    state.current = { ...state.current, secretsSet: { ollamaApiKey: value !== null } }
    return state.current
  }
  const hello = HelloRpcs.toLayer({
    "core.hello": (input) => {
      recorded.hellos.push({ component: input.component, version: input.version })
      if (options.refuseHello)
        return Effect.fail(core("PROTOCOL_VERSION_MISMATCH", { expected: 99, actual: input.protocolVersion }))
      return Effect.succeed({
        protocolVersion: options.welcomeVersion ?? PROTOCOL_VERSION,
        coreVersion: "fake",
        pid: 1
      })
    }
  })
  const owned = Effect.fnUntraced(function* (sessionId: SessionId) {
    const caller = yield* AgentCaller
    if (sessionId === ENDED_SESSION_ID) return yield* core("SESSION_ENDED", { sessionId })
    if (sessionId !== caller.sessionId) return yield* core("UNAUTHORIZED")
  })
  const agent = AgentRpcs.toLayer({
    "tool.list": ({ sessionId }) =>
      owned(sessionId).pipe(Effect.as(TOOLS.map(({ argsSchema: _, ...summary }) => summary))),
    "tool.spec": ({ sessionId, name }) =>
      owned(sessionId).pipe(
        Effect.andThen(() => {
          const tool = TOOLS.find((t) => t.name === name)
          return tool === undefined ? Effect.fail(core("TOOL_NOT_FOUND", { tool: name })) : Effect.succeed(tool)
        })
      ),
    "tool.call": ({ sessionId, name, args }) =>
      owned(sessionId).pipe(
        Effect.andThen(() => {
          recorded.calls.push({ name, args })
          return callTool(name, args, recorded)
        })
      ),
    // The fake's calls never wait on a user: the wait lasts until the agent interrupts it.
    "tool.waits_on_user": ({ sessionId }) => owned(sessionId).pipe(Effect.andThen(Effect.never)),
    "deno.prepare": ({ sessionId }) =>
      owned(sessionId).pipe(
        Effect.andThen(() =>
          options.deno === undefined
            ? Effect.fail(core("WORKSPACE_PATH_INVALID", { path: "", reason: "the fake has no workspace" }))
            : Effect.succeed({
                workspace: options.deno.workspace,
                timeoutMs: options.deno.timeoutMs ?? 60_000,
                outputBytes: options.deno.outputBytes ?? 1024 * 1024
              })
        )
      )
  })
  const desktop = DesktopRpcs.toLayer(
    DesktopRpcs.of({
      "desktop.settings.get": () => Effect.succeed(state.current),
      "desktop.settings.set": ({ settings }) =>
        Effect.sync(() => {
          recorded.settingsSets++
          state.current = { ...settings, secretsSet: state.current.secretsSet }
          return state.current
        }),
      "desktop.settings.set_secret": ({ name, value }) => Effect.sync(() => storeSecret(name, value)),
      "desktop.settings.clear_secret": ({ name }) => Effect.sync(() => storeSecret(name, null)),
      "desktop.providers.list": ({ rescan }) =>
        Effect.sync(() => {
          recorded.rescans.push(rescan)
          return PROVIDERS
        }),
      "desktop.status": () => Effect.die("not in the fake"),
      "desktop.effort.describe": () => Effect.die("not in the fake"),
      "desktop.effort.check": () => Effect.die("not in the fake"),
      "desktop.ollama.check": () => Effect.die("not in the fake"),
      "desktop.session.list": () => Effect.die("not in the fake"),
      "desktop.session.end": () => Effect.die("not in the fake"),
      "desktop.events.history": () => Effect.die("not in the fake"),
      "desktop.events.watch": () => Stream.die("not in the fake"),
      "desktop.origin.full_access": () => Effect.die("not in the fake"),
      "desktop.origin.policies": () => Effect.die("not in the fake"),
      "desktop.origin.set_policy": () => Effect.die("not in the fake")
    })
  )
  return Layer.mergeAll(hello, agent, desktop)
}

const callTool = (name: string, args: unknown, recorded: Recorded): Effect.Effect<CliOutput, PedelecError> => {
  switch (name) {
    case "echo": {
      const text = (args as { text?: unknown }).text
      if (text !== undefined && typeof text !== "string")
        return Effect.fail(core("TOOL_ARGS_INVALID", { tool: name, path: "/text", reason: "expected a string" }))
      return Effect.succeed({ ok: true, result: { echoed: args as { readonly [k: string]: never } } })
    }
    case "fail":
      return Effect.succeed({
        ok: false,
        error: {
          code: "TOOL_HANDLER_ERROR",
          message: "The page's handler for fail failed: boom.",
          details: { appCode: "E_BOOM" }
        }
      })
    case "big":
      return Effect.succeed(BIG_RESULT)
    case "slow":
      return Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => recorded.interrupted.push(name))))
    default:
      return Effect.fail(core("TOOL_NOT_FOUND", { tool: name }))
  }
}

const header = (headers: Readonly<Record<string, string>>, name: string): string | undefined => headers[name]

const AgentAuthLive = Layer.succeed(AgentAuth)((effect, { headers }) =>
  header(headers, AUTH_HEADERS.sessionCap) === CAPABILITY
    ? Effect.provideService(effect, AgentCaller, { sessionId: SESSION_ID })
    : Effect.fail(core("UNAUTHORIZED"))
)

const DesktopAuthLive = Layer.succeed(DesktopAuth)((effect, { headers }) =>
  header(headers, AUTH_HEADERS.launchSecret) === LAUNCH_SECRET
    ? Effect.provideService(effect, DesktopCaller, { role: "desktop" })
    : Effect.fail(core("UNAUTHORIZED"))
)

const homes: Array<string> = []

export const makeHome = (): string => {
  const home = mkdtempSync(path.join(os.tmpdir(), "pedelec-cli-"))
  homes.push(home)
  return home
}

/** Removes every home this test file made (after its fakes are closed). */
export const removeHomes = (): void => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true })
}

export const writeRuntime = (home: string, info: CoreRuntimeInfo): void => {
  const { runDir, runtimeFile } = pathsForHome(home)
  mkdirSync(runDir, { recursive: true, mode: 0o700 })
  writeFileSync(runtimeFile, JSON.stringify(info), { mode: 0o600 })
  chmodSync(runtimeFile, 0o600)
}

export const runtimeInfo = (socketPath: string, overrides: Partial<CoreRuntimeInfo> = {}): CoreRuntimeInfo => ({
  protocolVersion: PROTOCOL_VERSION,
  coreVersion: "fake",
  pid: process.pid,
  socketPath,
  launchSecret: LAUNCH_SECRET,
  startedAt: 1,
  ...overrides
})

/** Starts the fake on `<home>/run/core.sock` and writes its core.json. */
export const startFakeCore = async (options: FakeCoreOptions = {}): Promise<FakeCore> => {
  const home = makeHome()
  const { socketPath } = pathsForHome(home)
  const runtime = runtimeInfo(socketPath)
  writeRuntime(home, runtime)
  const recorded: Recorded = { hellos: [], calls: [], interrupted: [], settingsSets: 0, secrets: {}, rescans: [] }
  const server = RpcServer.layer(HelloRpcs.merge(AgentRpcs, DesktopRpcs)).pipe(
    Layer.provide([handlers(recorded, options), AgentAuthLive, DesktopAuthLive]),
    Layer.provide(RpcServer.layerProtocolSocketServer),
    Layer.provide(layerNdjson),
    Layer.provide(NodeSocketServer.layer({ path: socketPath })),
    // A CLI killed mid-call resets its connection; the server would log that, which is noise here.
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
  )
  const scope = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(server, scope))
  chmodSync(socketPath, 0o600)
  return {
    home,
    socketPath,
    runtime,
    recorded,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
