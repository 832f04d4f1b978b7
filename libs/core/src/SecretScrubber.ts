/**
 * SecretScrubber — the one place Core takes secrets out of text before it leaves: every value Core holds in
 * secrets.json (read through SettingsStore, at most once a second, and every value seen since start, so a key
 * replaced mid-session is still hidden) and any `Bearer <token>` are replaced by "(hidden)". SessionEvents runs
 * every event through it before the event is numbered, logged or delivered, and its logger does the same for Core's
 * log lines. Why: an upstream server may echo the key it was sent (`invalid API key: Bearer …`), and that text
 * travels as an error's reason to the page, the session log and the desktop monitor. It does not decide what a
 * secret is (SettingsStore) nor keep secrets from agents that need them (the adapters pass them on purpose).
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
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

/** How long a read of secrets.json serves: long enough that a burst of events costs one read. */
const REFRESH = "1 second"

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
  if (Array.isArray(value)) {
    const items = value.map((item) => scrubDeep(item, values))
    return (items.some((item, index) => item !== value[index]) ? items : value) as A
  }
  let changed = false
  const entries = Object.entries(value).map(([key, item]) => {
    const scrubbed = scrubDeep(item, values)
    if (scrubbed !== item) changed = true
    return [key, scrubbed] as const
  })
  return (changed ? Object.fromEntries(entries) : value) as A
}

const make = Effect.gen(function* () {
  const settings = yield* SettingsStore
  const known = new Set<string>()
  // A secrets.json that cannot be read leaves what was learned before: scrubbing must not fail a publish.
  const refresh = yield* Effect.cachedWithTTL(
    settings.getSecrets.pipe(
      Effect.tap((secrets) => {
        for (const value of Object.values(secrets)) {
          if (typeof value === "string" && value.length >= MIN_SECRET_LENGTH) known.add(value)
        }
        return Effect.void
      }),
      Effect.ignore
    ),
    REFRESH
  )
  return SecretScrubber.of({
    scrub: Effect.fn("SecretScrubber.scrub")(function* <A>(value: A) {
      yield* refresh
      return scrubDeep(value, known)
    }),
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
