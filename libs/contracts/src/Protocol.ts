/**
 * Protocol versioning shared by every link. Each link opens with a hello carrying `PROTOCOL_VERSION`; a peer that
 * speaks another version answers `PROTOCOL_VERSION_MISMATCH` instead of guessing.
 */
import * as Schema from "effect/Schema"

export { PROTOCOL_VERSION } from "./Wire.ts"

export const ProtocolVersion = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 }))

/** The component names, also used as an error's `source` and in `raisedBy` of the error catalog. */
export const Component = Schema.Literals([
  "sdk",
  "extension",
  "native-host",
  "core",
  "provider",
  "cli",
  "deno",
  "desktop"
])
export type Component = typeof Component.Type

/** First message on a link: who is speaking and which protocol it speaks. */
export const Hello = Schema.Struct({
  protocolVersion: ProtocolVersion,
  component: Component,
  version: Schema.String.check(Schema.isMaxLength(64))
})
export type Hello = typeof Hello.Type
