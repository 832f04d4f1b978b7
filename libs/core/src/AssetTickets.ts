/**
 * AssetTickets — owns the single-use tickets of Core's asset server (SPEC §8): minting them (a 128-bit id that names
 * the ticket in its URL and a 256-bit token the request must present, both from the OS CSPRNG, base64url), binding
 * each to one session, origin, path, method and (for an upload) byte count, expiring them, and redeeming one exactly
 * once with a constant-time token comparison. Only a digest of the token is kept. It does not check that the session
 * is live or whose it is (Sessions, when a ticket is issued and again when it is used), touch files (AssetFiles) or
 * speak HTTP (AssetServer).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import type { AssetPath } from "@pedelec/contracts/Assets"
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CoreConfig } from "./CoreConfig.ts"

export type TicketMethod = "PUT" | "GET"

/** What a ticket allows: one method on one path of one session, from one origin. */
export interface TicketGrant {
  readonly sessionId: SessionId
  readonly origin: Origin
  readonly path: AssetPath
  readonly method: TicketMethod
  /** An upload's exact body length; undefined for a download. */
  readonly bytes: number | undefined
}

export interface Ticket extends TicketGrant {
  readonly id: string
  readonly expiresAt: number
}

export interface Minted extends Ticket {
  /** Handed out once, to the host that asked; the book keeps only its digest. */
  readonly token: string
}

/** What a request presents: the ticket id from its URL, its token header, its `Origin` and its method. */
export interface Presented {
  readonly id: string
  readonly token: string | undefined
  readonly origin: string | undefined
  readonly method: string
}

/**
 * `corsOrigin` is the origin a refusal may be shown to: the ticket's own origin once the request came from it, so the
 * session's page reads why; undefined when the request came from elsewhere or named no known ticket.
 */
export type Verdict =
  | { readonly _tag: "Granted"; readonly ticket: Ticket }
  | {
      readonly _tag: "Refused"
      /** ASSET_TICKET_EXPIRED or ASSET_UNAUTHORIZED. */
      readonly code: ErrorCode
      readonly reason: string
      readonly corsOrigin: Origin | undefined
    }

/** A ticket id in a URL: 128 random bits, base64url. Anything else names no ticket. */
export const TICKET_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/

const digestOf = (token: string) => createHash("sha256").update(token, "utf8").digest()

interface Entry {
  readonly ticket: Ticket
  readonly digest: Buffer
  used: boolean
}

/**
 * The tickets themselves, synchronous (a CORS preflight is answered on the spot), with the time passed in: Effect's
 * Clock in Core, so the rules follow a TestClock, and a plain counter in their own tests. A used or expired
 * ticket stays known for one more lifetime, so a late or repeated request from the right page still learns
 * `ASSET_TICKET_EXPIRED` rather than nothing.
 */
export class TicketBook {
  readonly #entries = new Map<string, Entry>()
  readonly #ttlMs: number
  readonly #now: () => number

  constructor(ttlMs: number, now: () => number) {
    this.#ttlMs = ttlMs
    this.#now = now
  }

  get size(): number {
    return this.#entries.size
  }

  mint(grant: TicketGrant): Minted {
    this.#prune()
    const id = randomBytes(16).toString("base64url")
    const token = randomBytes(32).toString("base64url")
    const ticket: Ticket = { ...grant, id, expiresAt: this.#now() + this.#ttlMs }
    this.#entries.set(id, { ticket, digest: digestOf(token), used: false })
    return { ...ticket, token }
  }

  /**
   * A CORS preflight: the ticket a browser may go on to use, if `origin` is its origin, `method` its method and it
   * is still usable. Never consumes it: a preflight carries no token.
   */
  preflight(id: string, origin: string | undefined, method: string | undefined): Ticket | undefined {
    const entry = this.#entries.get(id)
    if (entry === undefined || entry.used || this.#now() >= entry.ticket.expiresAt) return undefined
    return entry.ticket.origin === origin && entry.ticket.method === method ? entry.ticket : undefined
  }

  /**
   * Origin first (a request from another page learns nothing more), then the token (constant time), then use and
   * expiry, then the method. Only a request that passes all of them uses the ticket up; a failed guess does not.
   */
  redeem(presented: Presented): Verdict {
    this.#prune()
    const entry = this.#entries.get(presented.id)
    if (entry === undefined) return refuse("ASSET_TICKET_EXPIRED", "the ticket is unknown, expired or used", undefined)
    const { ticket } = entry
    if (presented.origin !== ticket.origin)
      return refuse("ASSET_UNAUTHORIZED", "the request did not come from the session's origin", undefined)
    if (presented.token === undefined || !timingSafeEqual(digestOf(presented.token), entry.digest))
      return refuse("ASSET_UNAUTHORIZED", "the ticket's token is missing or wrong", ticket.origin)
    if (entry.used) return refuse("ASSET_TICKET_EXPIRED", "the ticket was already used", ticket.origin)
    if (this.#now() >= ticket.expiresAt) return refuse("ASSET_TICKET_EXPIRED", "the ticket expired", ticket.origin)
    if (presented.method !== ticket.method)
      return refuse("ASSET_UNAUTHORIZED", `the ticket is for ${ticket.method}, not ${presented.method}`, ticket.origin)
    entry.used = true
    return { _tag: "Granted", ticket }
  }

  #prune() {
    const cutoff = this.#now() - this.#ttlMs
    for (const [id, entry] of this.#entries) if (entry.ticket.expiresAt <= cutoff) this.#entries.delete(id)
  }
}

const refuse = (code: ErrorCode, reason: string, corsOrigin: Origin | undefined): Verdict => ({
  _tag: "Refused",
  code,
  reason,
  corsOrigin
})

export class AssetTickets extends Context.Service<
  AssetTickets,
  {
    readonly mint: (grant: TicketGrant) => Effect.Effect<Minted>
    readonly preflight: (id: string, origin: string | undefined, method: string | undefined) => Ticket | undefined
    readonly redeem: (presented: Presented) => Effect.Effect<Verdict>
  }
>()("pedelec/core/AssetTickets") {
  static readonly layer = Layer.effect(
    AssetTickets,
    Effect.gen(function* () {
      const config = yield* CoreConfig
      const clock = yield* Clock.Clock
      const book = new TicketBook(config.assetTicketMs, () => clock.currentTimeMillisUnsafe())
      return AssetTickets.of({
        mint: (grant) => Effect.sync(() => book.mint(grant)),
        preflight: (id, origin, method) => book.preflight(id, origin, method),
        redeem: (presented) => Effect.sync(() => book.redeem(presented))
      })
    })
  )
}
