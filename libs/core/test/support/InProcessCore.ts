/**
 * InProcessCore — Core's session machinery in the test's own process, with no build and no socket: the real
 * Sessions, ToolRouter, TurnRunner, SessionEvents and stores on a temp `PEDELEC_HOME`, over a scripted agent the
 * test drives event by event (`FakeAgent`). Time is the test's clock (`it.effect` gives TestClock). What it does not
 * prove — the real process, the socket, pedelec-cli — the built-daemon suites in apps/core-daemon prove.
 */
import { mkdtemp, realpath, rm } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { NodeServices } from "@effect/platform-node"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import { NO_EFFORT_PROFILES, type ProviderAdapter, type TurnInput } from "@pedelec/providers/Provider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { CoreConfig, type CoreConfigShape } from "../../src/CoreConfig.ts"
import { sessionMachinery } from "../../src/CoreLayer.ts"
import { CorePaths } from "../../src/CorePaths.ts"
import { Providers } from "../../src/Providers.ts"

export const ORIGIN = "https://app.example" as Origin
export const OTHER_ORIGIN = "https://other.example" as Origin

/** The agent's side of every turn: what it was sent, and the events the test makes it say. */
export interface FakeAgent {
  readonly adapter: ProviderAdapter
  /** Each turn's input, in order. */
  readonly sent: Array<TurnInput>
  /** Events the running turn emits next; a turn ends after `completed` or `error`. */
  readonly say: (...events: ReadonlyArray<ProviderEvent>) => Effect.Effect<void>
  /** Session processes started and not yet closed. */
  readonly running: () => number
  readonly started: () => number
}

export const makeFakeAgent = Effect.gen(function* () {
  const events = yield* Queue.unbounded<ProviderEvent>()
  const sent: Array<TurnInput> = []
  let running = 0
  let started = 0
  const adapter: ProviderAdapter = {
    code: "scripted",
    name: "Fake agent",
    experimental: false,
    effort: { supported: false },
    effortAllowList: { argv: [], env: [] },
    defaultEffort: NO_EFFORT_PROFILES,
    detect: Effect.succeed({
      code: "scripted",
      name: "Fake agent",
      available: true,
      version: "1.0.0",
      error: null,
      experimental: false,
      effort: { supported: false },
      location: null
    }),
    start: () =>
      Effect.acquireRelease(
        Effect.sync(() => {
          running++
          started++
        }),
        () => Effect.sync(() => running--)
      ).pipe(
        Effect.as({
          send: (turn: TurnInput) => Stream.fromQueue(events).pipe(Stream.onStart(Effect.sync(() => sent.push(turn)))),
          interrupt: Effect.void,
          processes: Effect.succeed([])
        })
      )
  }
  return {
    adapter,
    sent,
    say: (...said) => Effect.asVoid(Queue.offerAll(events, said)),
    running: () => running,
    started: () => started
  } satisfies FakeAgent
})

export const testConfig: Partial<CoreConfigShape> = {
  binDir: undefined,
  enableScripted: true,
  leaseMs: 10_000,
  stallTimeoutMs: 60_000,
  ownerGraceMs: 10_000
}

/** A temp Pedelec home for the test's scope. */
export const tempHome = Effect.acquireRelease(
  Effect.promise(async () => realpath(await mkdtemp(path.join(os.tmpdir(), "pedelec-core-")))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** Core's session machinery on `home` over `agent`; one layer per simulated Core process. */
export const machinery = (home: string, agent: FakeAgent, config: Partial<CoreConfigShape> = {}) =>
  sessionMachinery(Providers.layerWith([agent.adapter])).pipe(
    Layer.provideMerge(
      Layer.mergeAll(CorePaths.layerFor(home), CoreConfig.layerWith({ ...testConfig, ...config }), NodeServices.layer)
    )
  )

/**
 * Collects a session's events in the background until `until` holds for one (inclusive). The subscription is made
 * before this returns (the fork starts at once), so nothing the test does next can come before it.
 */
export const collect = <E, R>(stream: Stream.Stream<SessionEvent, E, R>, until: (event: SessionEvent) => boolean) =>
  Effect.forkChild(Stream.runCollect(Stream.takeUntil(stream, until)), { startImmediately: true })

export const ofType =
  <T extends SessionEvent["type"]>(type: T) =>
  (events: ReadonlyArray<SessionEvent>) =>
    events.filter((event): event is Extract<SessionEvent, { type: T }> => event.type === type)

export const isEnded = (sessionId: SessionId) => (event: SessionEvent) =>
  event.sessionId === sessionId && event.type === "ended"
