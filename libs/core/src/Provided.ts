/**
 * Provided — a service's own dependencies given to the effects it runs for a caller, on top of the caller's context.
 * `Effect.provide(effect, context)` merges: it copies the caller's whole context (an RPC handler's carries all of
 * Core's ~100 services) into a new map on every call, 4 µs with 110 services in a hot loop and more between calls
 * (Context's copies were ~3% of Core's CPU per tool call in a profile); a tool call pays it two to four times.
 * Adding the few picked services as overlays costs nothing measurable (Context.add). It does not pick them.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** Runs effects with `picked`'s services added over the caller's context; the later service wins, as provide. */
export const providing = <R0>(picked: Context.Context<R0>) => {
  const entries = [...picked.mapUnsafe]
  const over = <R>(outer: Context.Context<Exclude<R, R0>>): Context.Context<R> => {
    let context = outer as Context.Context<unknown>
    for (const [key, service] of entries) context = Context.addUnsafe(context, key, service)
    return context as Context.Context<R>
  }
  return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, R0>> =>
    Effect.updateContext(effect, over<R>)
}
