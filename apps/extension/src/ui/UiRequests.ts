/**
 * UiRequests — serves the extension's own UI pages (UiMessages): the approval window's decision (accepted only from
 * approval.html, and only for the pending ticket), the confirmation window's answer (only from confirm.html), and the options page's listing and revocations (only from
 * options.html). Every message is decoded with Schema first; service-worker.ts has already checked that it comes from
 * this extension. Listing sessions asks Core only when some origin is approved: with none, no page may have any.
 * Each approved site's policy is shown as Core holds it (the desktop app sets policies too), the extension's copy
 * refreshed with it, or the copy when Core does not answer.
 */
import type { SessionInfo } from "@pedelec/contracts/Session"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Approvals } from "../approval/Approvals.ts"
import { Grants, type OriginGrant } from "../approval/Grants.ts"
import { Confirmations } from "../confirm/Confirmations.ts"
import { HostCalls } from "../host/HostCalls.ts"
import { Revocation } from "../options/Revocation.ts"
import { PagePorts } from "../page/PagePorts.ts"
import { type OptionsState, type SessionsListing, UiRequest, type UiResponse } from "./UiMessages.ts"

const decodeRequest = Schema.decodeUnknownExit(UiRequest)

const refused = (message: string): UiResponse => ({ ok: false, message })
const answered = (result: unknown): UiResponse => ({ ok: true, result })

export class UiRequests extends Context.Service<
  UiRequests,
  {
    /** `senderPath` is the pathname of the extension page that sent the message, e.g. "/options.html". */
    readonly handle: (message: unknown, senderPath: string) => Effect.Effect<UiResponse>
  }
>()("pedelec/extension/UiRequests") {
  static readonly layer = Layer.effect(
    UiRequests,
    Effect.gen(function* () {
      const services: Services = {
        approvals: yield* Approvals,
        confirmations: yield* Confirmations,
        grants: yield* Grants,
        hostCalls: yield* HostCalls,
        revocation: yield* Revocation,
        pagePorts: yield* PagePorts
      }
      return UiRequests.of({ handle: (message, senderPath) => handle(services, message, senderPath) })
    })
  )
}

interface Services {
  readonly approvals: Approvals["Service"]
  readonly confirmations: Confirmations["Service"]
  readonly grants: Grants["Service"]
  readonly hostCalls: HostCalls["Service"]
  readonly revocation: Revocation["Service"]
  readonly pagePorts: PagePorts["Service"]
}

/** Core's sessions, not yet ended; Core is not asked (nor woken) while no origin is approved. */
const liveSessions = (hostCalls: HostCalls["Service"], anyApproved: boolean): Effect.Effect<SessionsListing> =>
  anyApproved
    ? hostCalls.call("session.list", {}).pipe(
        Effect.map(
          (list): SessionsListing => ({
            ok: true,
            sessions: list.filter((session: SessionInfo) => session.status !== "ended")
          })
        ),
        Effect.catch((error) => Effect.succeed<SessionsListing>({ ok: false, error: error.toWire() }))
      )
    : Effect.succeed({ ok: true, sessions: [] })

/** Each grant with its policy as Core holds it, asked on one native port; the extension's copy where Core did not answer. */
const policiesFromCore = ({ grants, hostCalls }: Services, granted: ReadonlyArray<OriginGrant>) =>
  Effect.gen(function* () {
    if (granted.length === 0) return granted
    const answers = yield* hostCalls.callEach(
      "origin.get_policy",
      granted.map(({ origin }) => ({ origin }))
    )
    return yield* Effect.forEach(granted, (grant, index) => {
      const answer = answers[index]!
      if (Exit.isFailure(answer)) return Effect.succeed(grant)
      // Only over the copy this listing saw: a create may have taken a newer one from Core since it asked.
      return Effect.as(grants.setPolicy(grant.origin, answer.value, grant.policy), { ...grant, policy: answer.value })
    })
  })

const optionsState = Effect.fnUntraced(function* (services: Services) {
  const { grants, pagePorts, hostCalls } = services
  const granted = yield* grants.list
  const [origins, sessions] = yield* Effect.all(
    [policiesFromCore(services, granted), liveSessions(hostCalls, granted.length > 0)],
    { concurrency: "unbounded" }
  )
  const open = yield* pagePorts.count
  const state: OptionsState = {
    origins: origins.map(({ origin, paths, manifest, policy }) => ({
      origin,
      paths,
      policy,
      openPorts: open.get(origin) ?? 0,
      ...(manifest === undefined ? {} : { manifest })
    })),
    sessions
  }
  return state
})

const handle = Effect.fn("UiRequests.handle")(function* (services: Services, message: unknown, senderPath: string) {
  const decoded = decodeRequest(message)
  if (Exit.isFailure(decoded)) return refused("The extension could not read this request; reload the page.")
  const request = decoded.value
  if (request.kind === "approval.decide") {
    if (senderPath !== "/approval.html") return refused("Only the approval window decides approvals.")
    const accepted = yield* services.approvals.decide(request.ticket, request.approve)
    return accepted
      ? answered({ accepted })
      : refused("This approval request is no longer waiting (it was answered, timed out, or its page closed).")
  }
  if (request.kind === "confirm.decide") {
    if (senderPath !== "/confirm.html") return refused("Only the confirmation window answers a tool call.")
    const accepted = yield* services.confirmations.decide(request.ticket, request.decision)
    return accepted
      ? answered({ accepted })
      : refused("This tool call is no longer waiting (it was answered, timed out or cancelled).")
  }
  if (senderPath !== "/options.html") return refused("Only the options page manages approvals.")
  switch (request.kind) {
    case "options.state":
      return answered(yield* optionsState(services))
    case "origin.revoke":
      return answered(yield* services.revocation.revokeOrigin(request.origin))
    case "origin.set_policy": {
      // Core's copy first: a policy the runtime did not take is not shown as set.
      const set = yield* services.hostCalls
        .call("origin.set_policy", { origin: request.origin, policy: request.policy })
        .pipe(Effect.result)
      if (set._tag === "Failure") return refused(`The policy was not saved: ${set.failure.message}`)
      yield* services.grants.setPolicy(request.origin, set.success)
      return answered(set.success)
    }
    case "path.revoke":
      yield* services.revocation.revokePath(request.origin, request.path)
      return answered({})
  }
})
