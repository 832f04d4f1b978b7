/**
 * CoreAuth — the three roles of Core IPC as server-side RPC middleware. Host and desktop: the request carries this
 * launch's secret (from `run/core.json`); the groups differ in what they offer, and the native host relays host tags
 * only. Agent: the request carries a live session's capability, and may only name that session. Anything else is
 * `UNAUTHORIZED`, before any handler runs. Who owns a session is Sessions' business.
 */
import { timingSafeEqual } from "node:crypto"
import type { LaunchSecret } from "@pedelec/contracts/Ids"
import { AgentAuth, AgentCaller } from "@pedelec/contracts/node/AgentLink"
import { AUTH_HEADERS, HostAuth, HostCaller } from "@pedelec/contracts/node/CoreLink"
import { DesktopAuth, DesktopCaller } from "@pedelec/contracts/node/DesktopRole"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Sessions } from "./Sessions.ts"

/** This Core launch: its secret (checked on every host and desktop request) and start time, both in `run/core.json`. */
export class CoreSecret extends Context.Service<
  CoreSecret,
  { readonly launchSecret: LaunchSecret; readonly startedAt: number }
>()("pedelec/core/CoreSecret") {}

const unauthorized = (reason: string) => PedelecError.fromCode("UNAUTHORIZED", "core", { details: { reason } })

/**
 * The check every host and desktop request makes: the expected secret's bytes are encoded once per launch, and a
 * given one of another length is refused before it is encoded (the length is no secret: every launch mints the same).
 */
const launchProof = (launchSecret: LaunchSecret) => {
  const expected = Buffer.from(launchSecret)
  return (headers: Headers.Headers) => {
    const given = Option.getOrUndefined(Headers.get(headers, AUTH_HEADERS.launchSecret))
    if (given === undefined || Buffer.byteLength(given) !== expected.length) return false
    return timingSafeEqual(Buffer.from(given), expected)
  }
}

const staleSecret = () => unauthorized("the launch secret is missing or stale: read run/core.json again")

export const HostAuthLive = Layer.effect(
  HostAuth,
  Effect.gen(function* () {
    const proves = launchProof((yield* CoreSecret).launchSecret)
    return HostAuth.of((effect, { headers }) =>
      proves(headers) ? Effect.provideService(effect, HostCaller, { pid: undefined }) : Effect.fail(staleSecret())
    )
  })
)

export const DesktopAuthLive = Layer.effect(
  DesktopAuth,
  Effect.gen(function* () {
    const proves = launchProof((yield* CoreSecret).launchSecret)
    return DesktopAuth.of((effect, { headers }) =>
      proves(headers) ? Effect.provideService(effect, DesktopCaller, { role: "desktop" }) : Effect.fail(staleSecret())
    )
  })
)

export const AgentAuthLive = Layer.effect(
  AgentAuth,
  Effect.gen(function* () {
    const sessions = yield* Sessions
    return AgentAuth.of((effect, { headers, payload }) => {
      const capability = Option.getOrUndefined(Headers.get(headers, AUTH_HEADERS.sessionCap))
      const sessionId = capability === undefined ? undefined : sessions.byCapability(capability)
      if (sessionId === undefined) {
        return Effect.fail(unauthorized("PEDELEC_SESSION_CAP does not open a live session"))
      }
      const named =
        typeof payload === "object" && payload !== null && "sessionId" in payload ? payload.sessionId : undefined
      if (named !== sessionId) {
        return Effect.fail(unauthorized("the capability belongs to another session than --thread-id"))
      }
      return Effect.provideService(effect, AgentCaller, { sessionId })
    })
  })
)
