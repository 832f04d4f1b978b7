/**
 * EventLine — what every CLI's event decoder shares about a line before it knows the CLI's format: the JSON in it,
 * refused when nested deeper than the links allow (a 12,000-deep line made a decoder's Schema overflow the stack:
 * a RangeError out of the turn), and the usage event with counts a page can trust (a CLI's 1e308 or 2^53 token count
 * is not an integer the contracts' Schema accepts). Each CLI's own shapes stay in its <Cli>Events.ts.
 */
import { jsonDepthExceeded } from "@pedelec/contracts/JsonPointer"
import type { ProviderEvent } from "@pedelec/contracts/node/ProviderEvent"
import * as Option from "effect/Option"

/** The line's JSON value; none when it is not JSON or is nested deeper than MAX_JSON_DEPTH. */
export const jsonOf = (text: string): Option.Option<unknown> => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return Option.none()
  }
  return jsonDepthExceeded(value) === undefined ? Option.some(value) : Option.none()
}

const safeCount = (value: number) =>
  Number.isFinite(value) && value > 0 ? Math.min(Math.round(value), Number.MAX_SAFE_INTEGER) : 0

/** A usage event with safe integer counts; undefined when the turn used nothing (never reached the model). */
export const usageEvent = (input: number, output: number): ProviderEvent | undefined => {
  const inputTokens = safeCount(input)
  const outputTokens = safeCount(output)
  return inputTokens + outputTokens === 0 ? undefined : { type: "usage", inputTokens, outputTokens }
}
