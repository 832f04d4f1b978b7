/**
 * SecretScrubber — the one place Core takes secrets out of text before it leaves: every value Core holds in
 * secrets.json (read through SettingsStore when it changed, looked at at most once a second, and every value seen
 * since start, so a key replaced mid-session is still hidden) and any `Bearer <token>` are replaced by "(hidden)".
 * SessionEvents runs every event through it before the event is numbered, logged or delivered, and its logger does
 * the same for Core's log lines. Why: an upstream server may echo the key it was sent (`invalid API key: Bearer
 * …`), and that text travels as an error's reason to the page, the session log and the desktop monitor. It does not
 * decide what a secret is (SettingsStore) nor keep secrets from agents that need them (the adapters pass them on
 * purpose).
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { SettingsStore } from "./SettingsStore.ts"

export const HIDDEN = "(hidden)"

/**
 * Shorter values are not hunted as bare substrings: a placeholder key such as "ollama" (a local Ollama ignores the
 * key) would otherwise blank out every mention of the provider. A short key sent as a header is still caught by
 * the Bearer rule.
 */
const MIN_SECRET_LENGTH = 8

/** `Bearer <token>`, as an Authorization header is written and as servers quote it back. */
const BEARER = /\bBearer\s+[^\s"',;)\]}]+/gi

/** How long a look at secrets.json serves: a burst of events costs one stat, and an edit is seen within a second. */
const REFRESH = Duration.seconds(1)

/** `text` with every known value and every bearer token replaced. */
export const scrubText = (text: string, values: ReadonlySet<string>): string => {
  let out = text
  for (const value of values) if (out.includes(value)) out = out.replaceAll(value, HIDDEN)
  return /bearer/i.test(out) ? out.replace(BEARER, `Bearer ${HIDDEN}`) : out
}

/** `value` (a JSON-like tree) with every string in it scrubbed; the same object when nothing needed it. */
export const scrubDeep = <A>(value: A, values: ReadonlySet<string>): A => {
  if (typeof value === "string") return scrubText(value, values) as A
  if (typeof value !== "object" || value === null) return value
  // Copied only from the first string that changed: every event goes through here, and almost none holds a secret.
  if (Array.isArray(value)) {
    let items: Array<unknown> | undefined
    for (let index = 0; index < value.length; index++) {
      const scrubbed = scrubDeep(value[index], values)
      if (scrubbed !== value[index]) items ??= value.slice()
      if (items !== undefined) items[index] = scrubbed
    }
    return (items ?? value) as A
  }
  let copy: Record<string, unknown> | undefined
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    const item = (value as Record<string, unknown>)[key]
    const scrubbed = scrubDeep(item, values)
    if (scrubbed !== item) copy ??= { ...(value as Record<string, unknown>) }
    if (copy !== undefined) copy[key] = scrubbed
  }
  return (copy ?? value) as A
}

const make = Effect.gen(function* () {
  const settings = yield* SettingsStore
  const known = new Set<string>()
  // A secrets.json that cannot be read leaves what was learned before: scrubbing must not fail a publish.
  const refresh = settings.getSecrets.pipe(
    Effect.tap((secrets) => {
      for (const value of Object.values(secrets)) {
        if (typeof value === "string" && value.length >= MIN_SECRET_LENGTH) known.add(value)
      }
      return Effect.void
    }),
    Effect.ignore
  )
  // Within REFRESH of the last look, what is known is fresh enough: most events skip even the stat (and any
  // span), as this runs for every event of every session. After it the file is read only if its version changed:
  // the read's thread-pool round trips were ~5 ms of a new Ollama session's first turn (issue 15). Two events that
  // find it stale at once both look, which is harmless; a read that fails is tried again when the file changes.
  let freshUntil = 0
  let readVersion: string | undefined
  const refreshed = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    if (now < freshUntil) return Effect.void
    return Effect.flatMap(settings.secretsVersion, (version) => {
      const fresh = () => {
        freshUntil = now + Duration.toMillis(REFRESH)
        readVersion = version
      }
      return version === readVersion ? Effect.sync(fresh) : Effect.map(refresh, fresh)
    })
  })
  return SecretScrubber.of({
    scrub: <A>(value: A) => Effect.map(refreshed, () => scrubDeep(value, known)),
    scrubKnown: (value) => scrubDeep(value, known)
  })
})

export class SecretScrubber extends Context.Service<
  SecretScrubber,
  {
    /** `value` with every secret Core holds taken out of every string in it. */
    readonly scrub: <A>(value: A) => Effect.Effect<A>
    /** The same with what is known now, without reading secrets.json: for a logger, which cannot wait. */
    readonly scrubKnown: <A>(value: A) => A
  }
>()("pedelec/core/SecretScrubber") {
  static readonly layer = Layer.effect(SecretScrubber, make)

  /** Core's log lines through the scrubber; a cause is rendered and scrubbed into the message. */
  static readonly logger = Layer.unwrap(
    Effect.map(SecretScrubber, (scrubber) =>
      Logger.layer([
        Logger.make<unknown, void>((options) => {
          const message =
            options.cause.reasons.length === 0 ? options.message : [options.message, Cause.pretty(options.cause)].flat()
          Logger.defaultLogger.log({ ...options, message: scrubber.scrubKnown(message), cause: Cause.empty })
        })
      ])
    )
  )
}
