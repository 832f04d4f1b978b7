/**
 * Desktop — the renderer's typed view of main: `call(method, params)` encodes a DesktopLink request, sends it through
 * the BridgeClient and decodes the answer with that method's result schema; `watch` does the same per stream item.
 * It also owns the connection state every screen shows: a failure that means Core (or main) went away turns the
 * app to "reconnecting", which polls `desktop.status` until it answers and then bumps `generation` so each screen
 * loads again. It does not render anything (ui/) or choose the transport (BridgeClient.ts).
 */

import {
  type DesktopMethod,
  DesktopMethods,
  type DesktopParams,
  DesktopResponse,
  type DesktopResult,
  type DesktopStream,
  DesktopStreamItem,
  DesktopStreams,
  type DesktopStreamValue
} from "@pedelec/contracts/link/DesktopLink"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { signal } from "@preact/signals"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { type BridgeClient, unreachable } from "./BridgeClient.ts"

export type Outcome<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly error: PedelecErrorWire }

export type ConnectionState = "connected" | "reconnecting"

/** The codes that mean the other side is gone rather than that it said no. */
const GONE = new Set(["CORE_RUNTIME_UNAVAILABLE", "NATIVE_CONNECTION_CLOSED", "PROTOCOL_VERSION_MISMATCH"])
const POLL_MS = 500

export const connection = signal<ConnectionState>("connected")
/** Why the app is reconnecting, shown in the banner. */
export const lostBecause = signal<PedelecErrorWire | undefined>(undefined)
/** Bumped each time the connection comes back: screens reload on it. */
export const generation = signal(0)

let client: BridgeClient | undefined

export const useClient = (picked: BridgeClient) => {
  client = picked
}

const garbled = (what: string, error: unknown): PedelecErrorWire => ({
  code: "PROTOCOL_ERROR",
  message: `The desktop app answered ${what} this window cannot read (${String(error)}). Restart Pedelec.`,
  retryable: false,
  source: "desktop"
})

const decodeOutcome = <A>(schema: Schema.Top, raw: unknown): Outcome<A> => {
  const envelope = Schema.decodeUnknownExit(DesktopResponse)(raw)
  if (Exit.isFailure(envelope)) return { ok: false, error: garbled("a message", envelope.cause) }
  if (!envelope.value.ok) return { ok: false, error: envelope.value.error }
  const result = Schema.decodeUnknownExit(schema as Schema.Codec<A, unknown>)(envelope.value.result)
  return Exit.isSuccess(result)
    ? { ok: true, value: result.value }
    : { ok: false, error: garbled("a result", result.cause) }
}

const send = async <M extends DesktopMethod>(method: M, params: unknown): Promise<Outcome<DesktopResult<M>>> => {
  if (client === undefined) return { ok: false, error: unreachable("no bridge") }
  return decodeOutcome(DesktopMethods[method].result, await client.call({ method, params }))
}

let polling = false

const poll = async () => {
  while (connection.value === "reconnecting") {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    const status = await send("desktop.status", {})
    if (status.ok) {
      connection.value = "connected"
      lostBecause.value = undefined
      generation.value += 1
    }
  }
  polling = false
}

/** Core or main went away: show it, and look for it again until it answers. */
export const markLost = (error: PedelecErrorWire) => {
  lostBecause.value = error
  connection.value = "reconnecting"
  if (polling) return
  polling = true
  void poll()
}

export const isGone = (error: PedelecErrorWire) => GONE.has(error.code)

/** One call; a failure that means the connection is gone also turns the app to reconnecting. */
export const call = async <M extends DesktopMethod>(method: M, params: DesktopParams<M>) => {
  const outcome = await send(method, params)
  if (!outcome.ok && isGone(outcome.error)) markLost(outcome.error)
  return outcome
}

export interface WatchHandlers<S extends DesktopStream> {
  readonly onValue: (value: DesktopStreamValue<S>) => void
  readonly onError: (error: PedelecErrorWire) => void
}

/** A stream's items, decoded; its error (or a garbled item) ends it. Returns the function that stops it. */
export const watch = <S extends DesktopStream>(stream: S, handlers: WatchHandlers<S>): (() => void) => {
  if (client === undefined) return () => undefined
  const schema = DesktopStreams[stream].result as Schema.Codec<DesktopStreamValue<S>, unknown>
  let stop: () => void = () => undefined
  const fail = (error: PedelecErrorWire) => {
    stop()
    if (isGone(error)) markLost(error)
    handlers.onError(error)
  }
  stop = client.watch({ method: stream, params: {} }, (raw) => {
    const item = Schema.decodeUnknownExit(DesktopStreamItem)(raw)
    if (Exit.isFailure(item)) return fail(garbled("a stream item", item.cause))
    if (item.value.kind === "error") return fail(item.value.error)
    if (item.value.kind === "end") return
    const value = Schema.decodeUnknownExit(schema)(item.value.item)
    if (Exit.isFailure(value)) return fail(garbled("an event", value.cause))
    handlers.onValue(value.value)
  })
  return () => stop()
}
