/**
 * Mint — Core's source of ids and secrets: session, turn and tool-call ids, session capabilities and the launch
 * secret, all from the OS CSPRNG, base64url. Decoding them with the contracts schemas is the proof they fit.
 */
import { randomBytes } from "node:crypto"
import { LaunchSecret, SessionCapability, SessionId, ToolCallId, TurnId } from "@pedelec/contracts/Ids"
import * as Schema from "effect/Schema"

const random = (bytes: number) => randomBytes(bytes).toString("base64url")

/** 128 bits: unguessable, so knowing one session id tells nothing about another. */
export const mintSessionId = (): SessionId => Schema.decodeSync(SessionId)(random(16))
export const mintTurnId = (): TurnId => Schema.decodeSync(TurnId)(random(12))
export const mintToolCallId = (): ToolCallId => Schema.decodeSync(ToolCallId)(random(12))
/** 256 bits each. */
export const mintCapability = (): SessionCapability => Schema.decodeSync(SessionCapability)(random(32))
export const mintLaunchSecret = (): LaunchSecret => Schema.decodeSync(LaunchSecret)(random(32))
