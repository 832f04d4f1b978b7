/**
 * Turns — the one turn this page started and is waiting for (`sendText` or `prepare`), matched to Core's
 * `turn_completed` by the `turnId` Core minted. The completion may arrive before the request's answer (events and
 * answers travel separately), so recent completions are kept until their answer comes. Turns other tabs started are
 * only observed; they never settle anything here.
 */
import type { TurnCompletedEvent } from "@pedelec/contracts/Events"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import type { TurnKind } from "@pedelec/contracts/Session"

type Completion = typeof TurnCompletedEvent.Type

/** Completions kept for answers still on their way; a page waits for at most one turn at a time. */
const RECENT_COMPLETIONS = 16

export class PendingTurn {
  turnId: string | undefined
  readonly done: Promise<Completion>
  #settleWith!: (completion: Completion) => void
  #failWith!: (error: PedelecError) => void

  readonly kind: TurnKind

  constructor(kind: TurnKind) {
    this.kind = kind
    this.done = new Promise<Completion>((resolve, reject) => {
      this.#settleWith = resolve
      this.#failWith = reject
    })
    // The page may stop listening (a rejected sendText is not awaited twice); never an unhandled rejection.
    this.done.catch(() => undefined)
  }

  complete(completion: Completion): void {
    if (completion.reason === "failed" && completion.error !== undefined) {
      this.#failWith(PedelecError.fromWire(completion.error))
    } else this.#settleWith(completion)
  }

  fail(error: PedelecError): void {
    this.#failWith(error)
  }
}

export class Turns {
  #current: PendingTurn | undefined
  readonly #recent = new Map<string, Completion>()

  get active(): PendingTurn | undefined {
    return this.#current
  }

  begin(kind: TurnKind): PendingTurn {
    const turn = new PendingTurn(kind)
    this.#current = turn
    return turn
  }

  /** Core accepted the turn: its completion may already be here. */
  accepted(turn: PendingTurn, turnId: string): void {
    turn.turnId = turnId
    const completion = this.#recent.get(turnId)
    if (completion !== undefined) this.#finish(turn, completion)
  }

  /** The request failed before Core accepted a turn: the page may start another at once. */
  refused(turn: PendingTurn, error: PedelecError): void {
    if (this.#current === turn) this.#current = undefined
    turn.fail(error)
  }

  completed(completion: Completion): void {
    const turn = this.#current
    if (turn?.turnId === completion.turnId) {
      this.#finish(turn, completion)
      return
    }
    this.#recent.set(completion.turnId, completion)
    if (this.#recent.size > RECENT_COMPLETIONS) this.#recent.delete(this.#recent.keys().next().value!)
  }

  /** Chat of prepare turns is hidden; a prepare whose id is not known yet hides what arrives meanwhile. */
  isPrepare(turnId: string): boolean {
    const turn = this.#current
    return turn?.kind === "prepare" && (turn.turnId === undefined || turn.turnId === turnId)
  }

  /** The session ended: nothing it waited for will complete. */
  abandon(error: PedelecError): void {
    const turn = this.#current
    this.#current = undefined
    turn?.fail(error)
  }

  #finish(turn: PendingTurn, completion: Completion): void {
    if (this.#current === turn) this.#current = undefined
    this.#recent.delete(completion.turnId)
    turn.complete(completion)
  }
}
