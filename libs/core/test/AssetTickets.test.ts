import type { AssetPath } from "@pedelec/contracts/Assets"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import { assert, describe, it } from "vitest"
import { type Presented, TICKET_ID_PATTERN, TicketBook, type TicketGrant, type Verdict } from "../src/AssetTickets.ts"

const ORIGIN = "https://app.example" as Origin
const grant: TicketGrant = {
  sessionId: "s".repeat(22) as SessionId,
  origin: ORIGIN,
  path: "a/b.txt" as AssetPath,
  method: "PUT",
  bytes: 5
}

const clock = () => {
  let now = 1_000_000
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

const refusal = (verdict: Verdict) => (verdict._tag === "Refused" ? [verdict.code, verdict.corsOrigin] : "Granted")

describe("TicketBook", () => {
  it("mints a 128-bit id and a 256-bit token, base64url, never the same twice", () => {
    const book = new TicketBook(60_000, clock().now)
    const minted = Array.from({ length: 100 }, () => book.mint(grant))
    for (const ticket of minted) {
      assert.match(ticket.id, TICKET_ID_PATTERN)
      assert.match(ticket.token, /^[A-Za-z0-9_-]{43}$/)
    }
    assert.strictEqual(new Set(minted.map((ticket) => ticket.token)).size, 100)
    assert.strictEqual(new Set(minted.map((ticket) => ticket.id)).size, 100)
  })

  it("redeems once: the second use is ASSET_TICKET_EXPIRED, still shown to the ticket's origin", () => {
    const book = new TicketBook(60_000, clock().now)
    const { id, token } = book.mint(grant)
    const presented: Presented = { id, token, origin: ORIGIN, method: "PUT" }
    const first = book.redeem(presented)
    assert.strictEqual(first._tag, "Granted")
    assert.deepStrictEqual(refusal(book.redeem(presented)), ["ASSET_TICKET_EXPIRED", ORIGIN])
  })

  it("refuses another origin first (nothing shown to it), then a wrong token, without using the ticket up", () => {
    const book = new TicketBook(60_000, clock().now)
    const { id, token } = book.mint(grant)
    assert.deepStrictEqual(refusal(book.redeem({ id, token, origin: "https://evil.example", method: "PUT" })), [
      "ASSET_UNAUTHORIZED",
      undefined
    ])
    assert.deepStrictEqual(refusal(book.redeem({ id, token: undefined, origin: ORIGIN, method: "PUT" })), [
      "ASSET_UNAUTHORIZED",
      ORIGIN
    ])
    assert.deepStrictEqual(refusal(book.redeem({ id, token: `${token}A`, origin: ORIGIN, method: "PUT" })), [
      "ASSET_UNAUTHORIZED",
      ORIGIN
    ])
    assert.deepStrictEqual(refusal(book.redeem({ id, token, origin: ORIGIN, method: "GET" })), [
      "ASSET_UNAUTHORIZED",
      ORIGIN
    ])
    assert.strictEqual(book.redeem({ id, token, origin: ORIGIN, method: "PUT" })._tag, "Granted")
  })

  it("a token of another ticket opens nothing", () => {
    const book = new TicketBook(60_000, clock().now)
    const a = book.mint(grant)
    const b = book.mint({ ...grant, sessionId: "t".repeat(22) as SessionId })
    assert.deepStrictEqual(refusal(book.redeem({ id: b.id, token: a.token, origin: ORIGIN, method: "PUT" })), [
      "ASSET_UNAUTHORIZED",
      ORIGIN
    ])
  })

  it("expires after its lifetime, is remembered one more lifetime, then is unknown", () => {
    const time = clock()
    const book = new TicketBook(1_000, time.now)
    const { id, token, expiresAt } = book.mint(grant)
    assert.strictEqual(expiresAt, time.now() + 1_000)
    time.advance(1_000)
    assert.isUndefined(book.preflight(id, ORIGIN, "PUT"))
    assert.deepStrictEqual(refusal(book.redeem({ id, token, origin: ORIGIN, method: "PUT" })), [
      "ASSET_TICKET_EXPIRED",
      ORIGIN
    ])
    time.advance(1_000)
    book.mint(grant)
    assert.strictEqual(book.size, 1)
    assert.deepStrictEqual(refusal(book.redeem({ id, token, origin: ORIGIN, method: "PUT" })), [
      "ASSET_TICKET_EXPIRED",
      undefined
    ])
  })

  it("a preflight passes for the ticket's origin and method only, and uses nothing up", () => {
    const book = new TicketBook(60_000, clock().now)
    const { id, token } = book.mint(grant)
    assert.strictEqual(book.preflight(id, ORIGIN, "PUT")?.id, id)
    assert.isUndefined(book.preflight(id, ORIGIN, "GET"))
    assert.isUndefined(book.preflight(id, "https://evil.example", "PUT"))
    assert.isUndefined(book.preflight(id, undefined, "PUT"))
    assert.isUndefined(book.preflight("x".repeat(22), ORIGIN, "PUT"))
    assert.strictEqual(book.redeem({ id, token, origin: ORIGIN, method: "PUT" })._tag, "Granted")
    assert.isUndefined(book.preflight(id, ORIGIN, "PUT"))
  })
})
