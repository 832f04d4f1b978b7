/**
 * Ids and secrets that cross a hop. Each is a branded string with a bounded, URL-safe alphabet, so a raw string
 * (or an id of another kind) cannot be passed where one is expected, and nothing unbounded reaches a decoder.
 * Minting lives with the owner: Core mints session, turn and tool-call ids and secrets; the SDK mints request ids.
 */
import * as Schema from "effect/Schema"
import { WIRE_PATTERNS } from "./Wire.ts"

const urlSafe = (min: number, max: number) =>
  Schema.String.check(Schema.isPattern(new RegExp(`^[A-Za-z0-9_-]{${min},${max}}$`)))

/** `pedelec_thread_id` as the agent sees it: at least 128 random bits, base64url. */
export const SessionId = Schema.String.check(Schema.isPattern(WIRE_PATTERNS.sessionId)).pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

/** Minted by Core when it accepts a turn, so every tab observing a session sees the same id. */
export const TurnId = urlSafe(8, 64).pipe(Schema.brand("TurnId"))
export type TurnId = typeof TurnId.Type

/** Minted by Core for each call an agent makes; results are idempotent by this id. */
export const ToolCallId = urlSafe(8, 64).pipe(Schema.brand("ToolCallId"))
export type ToolCallId = typeof ToolCallId.Type

/** Correlates a request with its response on the browser links; minted by the side that asks. */
export const RequestId = urlSafe(1, 64).pipe(Schema.brand("RequestId"))
export type RequestId = typeof RequestId.Type

/** A session's capability: what an agent proves to Core (`PEDELEC_SESSION_CAP`). 256 random bits. */
export const SessionCapability = Schema.String.check(Schema.isPattern(WIRE_PATTERNS.secret)).pipe(
  Schema.brand("SessionCapability")
)
export type SessionCapability = typeof SessionCapability.Type

/** The per-launch secret in `run/core.json` that the host role proves. 256 random bits. */
export const LaunchSecret = Schema.String.check(Schema.isPattern(WIRE_PATTERNS.secret)).pipe(
  Schema.brand("LaunchSecret")
)
export type LaunchSecret = typeof LaunchSecret.Type

/**
 * A web origin as Chrome reports it in `sender.origin`: scheme, host and optional port, nothing else.
 * Only http and https pages can reach the extension (`externally_connectable`).
 */
export const Origin = Schema.String.check(
  Schema.isMaxLength(2048),
  Schema.isPattern(/^https?:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/)
).pipe(Schema.brand("Origin"))
export type Origin = typeof Origin.Type
