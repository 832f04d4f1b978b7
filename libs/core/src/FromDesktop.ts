/**
 * FromDesktop — Core's side of the desktop role (the desktop app, pedelec-cli's user commands): each DesktopRpcs
 * method mapped onto the service that owns it, plus the watch's first snapshot. Who may call is CoreAuth's; the
 * allow-list rule is ProviderChoice's, sessions are Sessions', the logs SessionEvents'. No other logic of its own.
 */

import type { WatchItem } from "@pedelec/contracts/Desktop"
import type { Origin } from "@pedelec/contracts/Ids"
import { DesktopRpcs } from "@pedelec/contracts/node/DesktopRole"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import type { Settings } from "@pedelec/contracts/Settings"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { CoreSecret } from "./CoreAuth.ts"
import { CoreConfig } from "./CoreConfig.ts"
import { CorePaths } from "./CorePaths.ts"
import { OllamaProbe } from "./OllamaProbe.ts"
import { ProviderChoice } from "./ProviderChoice.ts"
import { Providers } from "./Providers.ts"
import { type Notice, SessionEvents } from "./SessionEvents.ts"
import { Sessions } from "./Sessions.ts"
import { SettingsStore } from "./SettingsStore.ts"
import { SitePolicies } from "./SitePolicies.ts"

/** `origin` in or out of the full-access list, each origin once, the others in their order. */
const withFullAccess =
  (origin: Origin, enabled: boolean) =>
  (current: Settings): Settings => {
    const others = current.fullAccessOrigins.filter((known) => known !== origin)
    return { ...current, fullAccessOrigins: enabled ? [...others, origin] : others }
  }

/** The live sessions first, then every notice; a session the snapshot already named is not announced again. */
const watch = (sessions: Sessions["Service"], events: SessionEvents["Service"]) =>
  Stream.unwrap(
    Effect.gen(function* () {
      // Subscribed before the snapshot, so nothing that happens in between is missed.
      const notices = yield* events.watchAll
      const snapshot = yield* sessions.overview()
      const known = new Set(snapshot.map((session) => session.sessionId))
      const toItems = (notice: Notice): Effect.Effect<ReadonlyArray<WatchItem>> =>
        notice.kind === "event"
          ? Effect.succeed([{ kind: "event", event: notice.event }])
          : known.has(notice.sessionId)
            ? Effect.succeed([])
            : Effect.map(sessions.overview(notice.sessionId), (found) =>
                found.map((session): WatchItem => ({ kind: "opened", session }))
              )
      const first: WatchItem = { kind: "sessions", sessions: snapshot }
      return Stream.concat(Stream.make(first), notices.pipe(Stream.mapEffect(toItems), Stream.flattenIterable))
    })
  )

const status = Effect.gen(function* () {
  const config = yield* CoreConfig
  const paths = yield* CorePaths
  const { startedAt } = yield* CoreSecret
  const sessions = yield* Sessions
  return Effect.gen(function* () {
    return {
      coreVersion: config.version,
      protocolVersion: PROTOCOL_VERSION,
      pid: process.pid,
      startedAt,
      now: yield* Clock.currentTimeMillis,
      home: paths.home,
      socketPath: paths.socketPath,
      logsDir: paths.logsDir,
      liveSessions: (yield* sessions.overview()).length
    }
  })
})

export const DesktopHandlers = DesktopRpcs.toLayer(
  Effect.gen(function* () {
    const sessions = yield* Sessions
    const events = yield* SessionEvents
    const providers = yield* Providers
    const choice = yield* ProviderChoice
    const settings = yield* SettingsStore
    const ollama = yield* OllamaProbe
    const policies = yield* SitePolicies
    const currentStatus = yield* status
    return DesktopRpcs.of({
      "desktop.status": () => currentStatus,
      "desktop.settings.get": () => settings.get,
      "desktop.settings.set": ({ settings: next }) => Effect.andThen(choice.checkSettings(next), settings.set(next)),
      "desktop.settings.set_secret": ({ name, value }) => settings.setSecret(name, value),
      "desktop.settings.clear_secret": ({ name }) => settings.setSecret(name, null),
      "desktop.providers.list": ({ rescan }) => providers.list(rescan),
      "desktop.effort.describe": () => Effect.succeed(choice.describe),
      "desktop.effort.check": ({ provider, level, profile }) => choice.check(provider, level, profile),
      "desktop.ollama.check": (overrides) => ollama.check(overrides),
      "desktop.session.list": () => sessions.overview(),
      "desktop.session.end": ({ sessionId }) => sessions.endById(sessionId),
      "desktop.events.history": ({ sessionId, afterSeq, limit }) => events.history(sessionId, afterSeq, limit),
      "desktop.events.watch": () => watch(sessions, events),
      "desktop.origin.full_access": ({ origin, enabled }) => settings.update(withFullAccess(origin, enabled)),
      "desktop.origin.policies": () => policies.all,
      "desktop.origin.set_policy": ({ origin, policy }) => policies.set(origin, policy)
    })
  })
)
