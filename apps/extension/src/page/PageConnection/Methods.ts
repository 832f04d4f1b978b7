/**
 * PageConnection/Methods — what one page port does with each decoded call: `extension.hello`,
 * `extension.approval_status` and `extension.request_approval` are answered here; the approval gate (SPEC §4, §12:
 * `session.create`, `session.resume`, `providers.list`, `settings.get` and `extension.request_approval` open the
 * approval window for an unapproved origin, every other method from one is APPROVAL_REQUIRED); everything else is
 * forwarded to Core under its own name (Forwarding). It keeps which sessions this port claimed tools for (created here,
 * or resumed with `claimTools`), which its `session.subscribe` passes on as HostSubscribeParams.claimTools, beside
 * whether the page reads text refs on that subscription (the request's `textRefs`).
 */
import { SessionId } from "@pedelec/contracts/Ids"
import type { ApprovalStatus, PageParams } from "@pedelec/contracts/link/PageLink"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Approvals } from "../../approval/Approvals.ts"
import type { Grants } from "../../approval/Grants.ts"
import { digestOf, manifestOf } from "../../approval/Manifest.ts"
import type { Chrome } from "../../browser/Chrome.ts"
import type { Confirmations } from "../../confirm/Confirmations.ts"
import type { HostCalls } from "../../host/HostCalls.ts"
import type { PageCall } from "../PageRequests.ts"
import { type Forwarding, forward } from "./Forwarding.ts"
import { checkPolicy } from "./Policy.ts"

/** How long `extension.approval_status` waits for Core before it says `appConnected: false`. */
export const STATUS_PROBE_TIMEOUT_MS = 3_000

export interface PageMethodsContext {
  readonly chrome: Chrome["Service"]
  readonly grants: Grants["Service"]
  readonly approvals: Approvals["Service"]
  readonly confirmations: Confirmations["Service"]
  readonly hostCalls: HostCalls["Service"]
  readonly forwarding: Forwarding
  /** Sessions this port handles the tool calls of. */
  readonly claims: Set<SessionId>
}

const isSessionId = Schema.is(SessionId)
const sessionIdOf = (result: unknown) => {
  const id = typeof result === "object" && result !== null ? (result as { sessionId?: unknown }).sessionId : undefined
  return isSessionId(id) ? id : undefined
}

const hello = ({ chrome }: PageMethodsContext, { protocolVersion }: PageParams<"extension.hello">) =>
  protocolVersion === PROTOCOL_VERSION
    ? Effect.succeed({ protocolVersion: PROTOCOL_VERSION, extensionVersion: chrome.extensionVersion })
    : Effect.fail(
        PedelecError.fromCode("PROTOCOL_VERSION_MISMATCH", "extension", {
          details: { actual: PROTOCOL_VERSION, expected: protocolVersion }
        })
      )

const approvalStatus = Effect.fnUntraced(function* ({ grants, forwarding }: PageMethodsContext) {
  const { origin } = forwarding
  const approved = yield* grants.isApproved(origin)
  // Never probe for an unapproved origin: the status call must not wake the desktop app for it (SPEC §4).
  const appConnected = approved
    ? yield* forward(forwarding, "settings.get", {}).pipe(
        Effect.as(true),
        Effect.timeoutOrElse({ duration: STATUS_PROBE_TIMEOUT_MS, orElse: () => Effect.succeed(false) }),
        Effect.catch(() => Effect.succeed(false))
      )
    : false
  const status: ApprovalStatus = { installed: true, approved, origin, appConnected }
  return status
})

const createSession = Effect.fnUntraced(function* (context: PageMethodsContext, params: PageParams<"session.create">) {
  const { grants, approvals, forwarding, claims } = context
  const { origin } = forwarding
  const { input } = params
  const approved = yield* grants.isApproved(origin)
  // An approved site's policy first: nothing is asked of the user for a session it may not have.
  if (approved) yield* checkPolicy(grants, context.hostCalls, origin, input)
  const path = input.workspace?.path
  const pathGranted = path === undefined || (yield* grants.hasPath(origin, path))
  const manifest = manifestOf(input.skills)
  const digest = yield* Effect.promise(() => digestOf(manifest))
  const before = yield* grants.manifestOf(origin)
  // What the agent will be told is approved too: a session bringing another manifest than the approved one asks.
  if (!approved || !pathGranted || before?.digest !== digest) {
    const approvedAt = yield* Clock.currentTimeMillis
    yield* approvals.ask({
      origin,
      method: "session.create",
      askOrigin: !approved,
      path: pathGranted ? undefined : path,
      provider: input.provider,
      model: input.model,
      manifest: { approved: { digest, manifest, approvedAt }, previous: before?.manifest }
    })
  }
  const session = yield* forward(forwarding, "session.create", params)
  const sessionId = sessionIdOf(session)
  if (sessionId !== undefined) {
    claims.add(sessionId)
    yield* context.confirmations.remember(sessionId, input.skills)
  }
  return session
})

const resumeSession = Effect.fnUntraced(function* (context: PageMethodsContext, params: PageParams<"session.resume">) {
  const { grants, approvals, forwarding, claims } = context
  const { origin } = forwarding
  const { sessionId, claimTools } = params
  if (!(yield* grants.isApproved(origin))) {
    yield* approvals.ask({ origin, method: "session.resume", askOrigin: true, sessionId })
  }
  const session = yield* forward(forwarding, "session.resume", params)
  // A tab resuming without claiming (it lost the claim to another tab, say) must not claim again by this port.
  if (claimTools) claims.add(sessionId)
  else claims.delete(sessionId)
  return session
})

/** For the calls a page makes before it has a session: approval first, then the call itself. */
const askingFirst = Effect.fnUntraced(function* (
  context: PageMethodsContext,
  method: "providers.list" | "settings.get" | "extension.request_approval"
) {
  const { grants, approvals, forwarding } = context
  if (!(yield* grants.isApproved(forwarding.origin))) {
    yield* approvals.ask({ origin: forwarding.origin, method, askOrigin: true })
  }
})

const requireApproved = ({ grants, forwarding: { origin } }: PageMethodsContext) =>
  Effect.flatMap(grants.isApproved(origin), (approved) =>
    approved
      ? Effect.void
      : Effect.fail(PedelecError.fromCode("APPROVAL_REQUIRED", "extension", { details: { origin } }))
  )

export const dispatch = (
  context: PageMethodsContext,
  call: PageCall,
  textRefs = false
): Effect.Effect<unknown, PedelecError> => {
  switch (call.method) {
    case "extension.hello":
      return hello(context, call.params)
    case "extension.approval_status":
      return approvalStatus(context)
    case "session.create":
      return createSession(context, call.params)
    case "session.resume":
      return resumeSession(context, call.params)
    case "extension.request_approval":
      return Effect.andThen(askingFirst(context, call.method), approvalStatus(context))
    case "providers.list":
    case "settings.get":
      return Effect.andThen(askingFirst(context, call.method), forward(context.forwarding, call.method, call.params))
    case "session.subscribe": {
      const { sessionId } = call.params
      const params = { ...call.params, claimTools: context.claims.has(sessionId) }
      const subscription = { sessionId, textRefs }
      return Effect.andThen(requireApproved(context), forward(context.forwarding, call.method, params, subscription))
    }
    default:
      return Effect.andThen(requireApproved(context), forward(context.forwarding, call.method, call.params))
  }
}
