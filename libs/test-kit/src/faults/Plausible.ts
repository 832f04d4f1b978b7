/**
 * Plausible — messages that get past the first check of a decoder: a params object with the field names a method
 * declares (read from its Effect Schema struct) and, per field, a value that looks right (an id of the right
 * alphabet, a real origin, a small integer) or a hostile one. Pure noise is refused at the envelope; a fuzzer
 * needs most cases to reach the per-field decoding behind it, which is where a defect hides. The names below are
 * those the contracts use on every link (sessionId, origin, outcome, …); an unknown name gets hostile values only.
 */
import fc from "fast-check"
import { deepObject, hostileValue, shapedLike } from "./Hostile.ts"

const idAlphabet = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-".split(""))
const urlSafe = (min: number, max: number) =>
  fc.array(idAlphabet, { minLength: min, maxLength: max }).map((chars) => chars.join(""))

const ORIGINS = ["http://127.0.0.1:5173", "https://pedelec-e2e.test", "https://other.example", "http://[::1]:1"]

const manifest = fc.array(
  shapedLike({
    name: fc.constantFrom("add", "echo", "x".repeat(65), "9bad"),
    description: fc.string({ maxLength: 20 }),
    argsSchema: fc.oneof(
      fc.constant({ type: "object", properties: {} }),
      fc.constant({ type: "object", properties: { a: { type: "string", format: "email" } } }),
      fc.constant({ type: "object", properties: { a: { type: "string", pattern: "(a+)+$" } } }),
      fc.integer({ min: 10, max: 200 }).map((depth) => deepObject(depth, "items"))
    ),
    timeoutMs: fc.integer({ min: -1, max: 10_000_000 })
  }),
  { maxLength: 3 }
)

const input = shapedLike({
  provider: fc.constantFrom("scripted", "codex", "ollama", "nope"),
  model: fc.string({ maxLength: 10 }),
  effort: fc.constantFrom("low", "high", "max"),
  workspace: shapedLike({ kind: fc.constantFrom("managed", "path"), path: fc.constantFrom("/", "../..", "") }),
  skills: shapedLike({ guidance: fc.string({ maxLength: 20 }), tools: manifest }),
  autoEndOnDisconnect: fc.boolean()
})

const outcome = fc.oneof(
  shapedLike({ ok: fc.constant(true), result: fc.jsonValue({ maxDepth: 3 }) }),
  shapedLike({
    ok: fc.constant(false),
    error: shapedLike({ code: fc.constantFrom("TOOL_HANDLER_ERROR", "NOPE"), message: fc.string() })
  })
)

/** Per field name of the contracts, a value that passes a quick look. */
const PLAUSIBLE: Readonly<Record<string, fc.Arbitrary<unknown>>> = {
  sessionId: urlSafe(22, 64),
  toolCallId: urlSafe(1, 64),
  turnId: urlSafe(1, 64),
  origin: fc.constantFrom(...ORIGINS),
  text: fc.string({ maxLength: 50 }),
  claimTools: fc.boolean(),
  afterSeq: fc.integer({ min: -1, max: 1_000 }),
  protocolVersion: fc.integer({ min: 0, max: 3 }),
  sdkVersion: fc.string({ maxLength: 70 }),
  version: fc.string({ maxLength: 70 }),
  component: fc.constantFrom("sdk", "extension", "native-host", "cli", "desktop", "core", "nope"),
  input,
  outcome,
  message: fc.string({ maxLength: 30 }),
  progress: fc.double(),
  path: fc.constantFrom("a.txt", "assets/a.txt", "../x", "/etc/passwd", "a/../../b", "", "a\u0000b"),
  bytes: fc.integer({ min: -1, max: 2 ** 40 }),
  contentType: fc.constantFrom("text/plain", "application/json", "x".repeat(300)),
  settings: shapedLike({ defaultProvider: fc.constantFrom("scripted", null, "nope") }),
  key: fc.constantFrom("ollama.apiKey", "defaultProvider", "nope"),
  value: fc.string({ maxLength: 20 }),
  provider: fc.constantFrom("scripted", "ollama", "nope"),
  full: fc.boolean(),
  rescan: fc.boolean()
}

/** A value for the field `name`: plausible when the contracts use that name, else hostile. */
export const plausibleField = (name: string): fc.Arbitrary<unknown> => PLAUSIBLE[name] ?? hostileValue

/** The field names of an Effect Schema struct (empty for a schema that is not one). */
export const fieldNames = (schema: unknown): ReadonlyArray<string> => {
  const fields = (schema as { readonly fields?: Readonly<Record<string, unknown>> } | undefined)?.fields
  return fields === undefined ? [] : Object.keys(fields)
}

/** A params object for a method whose params schema is `schema`: its fields, each plausible or hostile. */
export const paramsFor = (schema: unknown): fc.Arbitrary<unknown> => {
  const names = fieldNames(schema)
  const shaped = shapedLike(Object.fromEntries(names.map((name) => [name, plausibleField(name)])))
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: hostileValue })
}

/** `paramsFor` a method drawn from `methods` (name → params schema), with its name. */
export const callOf = (
  methods: Readonly<Record<string, unknown>>
): fc.Arbitrary<{ readonly method: string; readonly params: unknown }> =>
  // One arbitrary per method, built once: building them per case costs more than the cases.
  fc.oneof(
    ...Object.entries(methods).map(([method, schema]) => paramsFor(schema).map((params) => ({ method, params })))
  )
