/**
 * PedelecTurns — the Pedelec side of the providers scenario: a host client on a running Core opens one session of a
 * provider and sends text turns one after the other, as a page would, timing each from session.send_text to the
 * turn's first event and to its turn_completed. Only turn 1 starts a provider session; the later ones resume it.
 * It does not start the Core (its caller does) nor time the bare CLI (BareCli).
 */
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { SessionId, TurnId } from "@pedelec/contracts/Ids"
import type { CoreRuntimeInfo } from "@pedelec/contracts/node/CoreLink"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import { completionOf, type Events, ORIGIN, openSession } from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"
import { type HostClient, hostClient } from "../BenchCore.ts"

/** Milliseconds from session.send_text, and Core's own clock from the turn's last message to its completion. */
export interface PedelecTurn {
  readonly firstEvent: number
  readonly completed: number
  /** Where a completion later than the CLI's own is spent: after the agent said its last, before Core ended the turn. */
  readonly messageToCompletion: number
}

/** The turn's first event that came from the provider (Core's own status change is not one). */
const fromProvider =
  (turnId: TurnId) =>
  (event: SessionEvent): event is Exclude<SessionEvent, { type: "status_changed" }> =>
    event.type !== "status_changed" && "turnId" in event && event.turnId === turnId

const timedTurn = (client: HostClient, events: Events, sessionId: SessionId, text: string, timeoutMs: number) =>
  Effect.gen(function* () {
    const started = performance.now()
    const { turnId } = yield* client["session.send_text"]({ origin: ORIGIN, sessionId, text })
    const first = yield* events.next(fromProvider(turnId), timeoutMs)
    const firstEvent = performance.now() - started
    const done = first.type === "turn_completed" ? first : yield* events.next(completionOf(turnId), timeoutMs)
    const completed = performance.now() - started
    if (done.reason !== "completed")
      return yield* Effect.fail(new Error(`a Pedelec turn ended ${done.reason}: ${JSON.stringify(done.error)}`))
    const lastMessage = events.seen.filter((e) => e.type === "chat" && e.turnId === turnId).at(-1)
    // Idle is published before the completion, so the session is idle for the next turn already.
    return {
      firstEvent,
      completed,
      messageToCompletion: done.at - (lastMessage?.at ?? Number.NaN)
    } satisfies PedelecTurn
  })

/**
 * One session of `turns` timed text turns, ended afterwards so its processes and workspace go. `settleMs`: how long
 * the page waits after opening it before its first text, as a page whose user types after it loaded (0: at once).
 * `afterTurn` runs after each turn, untimed (a CPU snapshot between turns).
 */
export const pedelecSession = (
  info: CoreRuntimeInfo,
  provider: { readonly code: ProviderCode; readonly model?: string },
  text: string,
  turns: number,
  timeoutMs: number,
  settleMs = 0,
  afterTurn: (turn: number) => Promise<void> = async () => {}
): Promise<Array<PedelecTurn>> =>
  Effect.gen(function* () {
    const client = yield* hostClient(info)
    const input = { provider: provider.code, ...(provider.model === undefined ? {} : { model: provider.model }) }
    const { sessionId, events } = yield* openSession(client, input)
    if (settleMs > 0) yield* Effect.sleep(settleMs)
    const timed: Array<PedelecTurn> = []
    for (let turn = 0; turn < turns; turn++) {
      timed.push(yield* timedTurn(client, events, sessionId, text, timeoutMs))
      yield* Effect.promise(() => afterTurn(turn))
    }
    yield* client["session.end"]({ origin: ORIGIN, sessionId })
    return timed
  }).pipe(Effect.scoped, Effect.runPromise)
