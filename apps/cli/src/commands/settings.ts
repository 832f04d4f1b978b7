/**
 * `pedelec-cli settings get | set <key> <value>`: the user's settings on machines without the desktop app, through
 * Core's desktop role (the user's own, as the desktop app's). `set` edits one dotted key of the current settings and validates the whole with the contracts'
 * `Settings` schema before sending; `ollama.apiKey` goes to `desktop.settings.set_secret` instead, read from stdin
 * only (argv is readable by every local process; `null` may still clear it). The answer is always the
 * `PublicSettings`, which says whether a secret is set and never what it is.
 */
import { type PublicSettings, type SecretName, Settings } from "@pedelec/contracts/Settings"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CliFailure } from "../CliFailure.ts"
import { type Outcome, succeeded, text } from "../Output.ts"
import { UserCore } from "../ToCore.ts"

const SECRETS: Readonly<Record<string, SecretName>> = { "ollama.apiKey": "ollamaApiKey" }
const FIELDS: ReadonlyArray<string> = Object.keys(Settings.fields)
const FORBIDDEN = new Set(["__proto__", "prototype", "constructor"])
const KEYS_HINT =
  "Keys: defaultProvider, defaultEffortLevel, defaultModels.<provider>, effortProfiles.<provider>.<level>, ollama.baseUrl, ollama.timeoutMs, ollama.defaultModel, fullAccessOrigins, ollama.apiKey (from stdin: `-`)."

const shown = (settings: PublicSettings, json: boolean): Outcome =>
  json ? succeeded(settings) : text(JSON.stringify(settings, null, 2))

export const settingsGet = Effect.fn("settingsGet")(function* (json: boolean) {
  const core = yield* UserCore
  return shown(yield* core.settings, json)
})

/** A secret on the command line is in /proc/<pid>/cmdline for every local process: only stdin (or null) may set one. */
const secretFromArgv = (key: string) =>
  CliFailure.usage(
    "INVALID_INPUT",
    `${key} is a secret and is never taken from the command line, where any local process can read it. Pipe it in: printf '%s' "$KEY" | pedelec-cli settings set ${key} -`,
    { key }
  )

export const settingsSet = Effect.fn("settingsSet")(function* (key: string, raw: string, json: boolean) {
  const secret = SECRETS[key]
  if (secret !== undefined && raw !== "-" && raw !== "null") return yield* Effect.fail(secretFromArgv(key))
  const input = raw === "-" ? yield* readStdin : raw
  const core = yield* UserCore
  if (secret !== undefined) return shown(yield* core.setSecret(secret, yield* secretValue(key, input)), json)
  const path = yield* keyPath(key)
  const { secretsSet: _, ...current } = yield* core.settings
  const next = yield* edited(current, path, key, parseValue(input))
  return shown(yield* core.setSettings(next), json)
})

/** JSON when it parses (`8080`, `true`, `null`, `["a"]`), else the text as typed (`codex`, `http://…`). */
export const parseValue = (input: string): unknown => {
  try {
    return JSON.parse(input)
  } catch {
    return input
  }
}

const keyPath = (key: string): Effect.Effect<ReadonlyArray<string>, CliFailure> => {
  const path = key.split(".")
  const known = path.length <= 3 && FIELDS.includes(path[0]!) && path.every((s) => s !== "" && !FORBIDDEN.has(s))
  return known
    ? Effect.succeed(path)
    : Effect.fail(CliFailure.usage("SETTINGS_INVALID", `Unknown settings key ${JSON.stringify(key)}. ${KEYS_HINT}`))
}

const REMOVE = Symbol("remove")

const setIn = (target: unknown, path: ReadonlyArray<string>, value: unknown): unknown => {
  const [head, ...rest] = path as [string, ...Array<string>]
  const object: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...target } : {}
  if (rest.length > 0) object[head] = setIn(object[head], rest, value)
  else if (value === REMOVE) delete object[head]
  else object[head] = value
  return object
}

const decodeSettings = Schema.decodeUnknownResult(Settings)

/** `null` sets a nullable key (defaultProvider) or, failing that, removes an optional one (defaultModels.x). */
const edited = (current: Settings, path: ReadonlyArray<string>, key: string, value: unknown) => {
  const attempts = value === null ? [null, REMOVE] : [value]
  let first: string | undefined
  for (const attempt of attempts) {
    const decoded = decodeSettings(setIn(current, path, attempt), { onExcessProperty: "error" })
    if (decoded._tag === "Success") return Effect.succeed(decoded.success)
    first ??= decoded.failure.message.replace(/\s*\n\s*/g, " ")
  }
  // An excess property means the key itself is unknown (`ollama.port`, `defaultModels.nope`).
  const message = first?.startsWith("Expected no excess property")
    ? `Unknown settings key ${JSON.stringify(key)}. ${KEYS_HINT}`
    : `${key} cannot be ${JSON.stringify(value)}: ${first}. Fix the value and retry.`
  return Effect.fail(CliFailure.usage("SETTINGS_INVALID", message, { key }))
}

/** The key itself, trimmed of the newline `echo` adds; `null` clears it. Never echoed back. */
const secretValue = (key: string, input: string): Effect.Effect<string | null, CliFailure> => {
  const parsed = parseValue(input)
  const value = parsed === null ? null : typeof parsed === "string" ? parsed : input
  return value === null || (value.length >= 1 && value.length <= 4096)
    ? Effect.succeed(value)
    : Effect.fail(
        CliFailure.usage(
          "SETTINGS_INVALID",
          `${key} must be 1 to 4096 characters (use \`ollama\` for a local server); pass null to clear it.`,
          { key }
        )
      )
}

const readStdin = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "")
})
