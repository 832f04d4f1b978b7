/**
 * ToolRouter/UserWaits — a call whose page waits on a person: the page's word (`tool.awaiting_user`, from the claim's
 * connection alone) pauses the call's timeout until the call ends, up to a ceiling, and the agent that tagged the
 * call hears of it (`tool.waits_on_user`, which `pedelec-cli mcp` turns into a progress notification). Queueing and
 * ending calls are Queue's; the service's methods are ToolRouter's.
 */
import type { ToolCallId } from "@pedelec/contracts/Ids"
import { TOOL_LIMITS } from "@pedelec/contracts/Tool"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { Session } from "../Session.ts"
import { armTimeout, offeredCall } from "./Queue.ts"

/** The offered call, if the claim's connection is the one asking: a tab without it runs nothing of this call. */
export const claimedCall = Effect.fnUntraced(function* (
  session: Session,
  toolCallId: ToolCallId,
  connection: number | undefined
) {
  const entry = offeredCall(session, toolCallId)
  const claim = yield* Ref.get(session.tools.answerer)
  return entry?.offeredAt === undefined || claim?.connection !== connection ? undefined : entry
})

/**
 * A person is answering the page (a modal, a confirmation): no timeout runs until the call ends, except the ceiling
 * (30 min from the offer, or the timer already armed if that is later), so a person reading is never cut off.
 */
export const awaitingUser = Effect.fnUntraced(function* (
  session: Session,
  toolCallId: ToolCallId,
  connection: number | undefined
) {
  const entry = yield* claimedCall(session, toolCallId, connection)
  if (entry?.offeredAt === undefined || entry.awaitingUser) return
  entry.awaitingUser = true
  const heard = entry.tag === undefined ? undefined : session.tools.userWaits.get(entry.tag)
  if (heard !== undefined) yield* Deferred.succeed(heard, undefined)
  const now = yield* Clock.currentTimeMillis
  const until = Math.max(entry.offeredAt + TOOL_LIMITS.awaitingUserCeilingMs, entry.deadline)
  yield* armTimeout(session, entry, Math.max(0, until - now))
})

/**
 * Completes once the agent's call named `tag` waits on the user (at once if it already does), so `pedelec-cli mcp`
 * can tell its client; the agent interrupts it when the call ends. One wait per tag.
 */
export const waitsOnUser = (session: Session, tag: string) =>
  Effect.gen(function* () {
    const { queue, userWaits } = session.tools
    if (queue.some((c) => c.tag === tag && c.awaitingUser)) return
    const heard = userWaits.get(tag) ?? (yield* Deferred.make<void>())
    userWaits.set(tag, heard)
    yield* Deferred.await(heard).pipe(Effect.ensuring(Effect.sync(() => userWaits.delete(tag))))
  })
