/**
 * Hostile — fast-check arbitraries for what an attacker or a broken peer sends a decoder: random JSON shapes, the
 * wrong type for every field, huge and odd numbers, lone surrogates, very wide objects, prototype keys, nesting far
 * past any depth bound, and, as bytes, truncated JSON, invalid UTF-8 and noise. Shared by every fuzzer of the fault
 * suite so each link is attacked with the same vocabulary. Deep nesting is built as text or iteratively, never by
 * recursion, so generating it cannot itself exhaust the stack. It decides nothing about what a right answer is.
 */
import fc from "fast-check"

/** A value of each JSON type a schema does not expect, plus the numbers JSON can spell but JavaScript rounds. */
const wrongTypes: ReadonlyArray<unknown> = [
  null,
  true,
  false,
  0,
  -0,
  -1,
  1.5,
  "",
  " ",
  "null",
  [],
  {},
  [null],
  { "": null },
  1e308,
  -1e308,
  5e-324,
  Number.MAX_SAFE_INTEGER + 2,
  2 ** 64,
  "9".repeat(400),
  "\u0000",
  "\ud800",
  "\u202e",
  "../../etc/passwd",
  "__proto__",
  { __proto__: null, constructor: { prototype: { polluted: true } } }
]

/** Text of the values built below, which JSON.stringify would take long to refuse (it recurses, then throws). */
const PREBUILT_TEXT = new WeakMap<object, string>()

const prebuilt = (value: object, text: string): object => {
  PREBUILT_TEXT.set(value, text)
  return value
}

/** An array nested `depth` deep, built without recursion. */
export const deepArray = (depth: number): unknown => {
  let value: unknown = []
  for (let i = 1; i < depth; i++) value = [value]
  return prebuilt(value as object, deepText(depth))
}

/** An object nested `depth` deep under key `key`, built without recursion. */
export const deepObject = (depth: number, key = "a"): unknown => {
  let value: unknown = {}
  for (let i = 1; i < depth; i++) value = { [key]: value }
  return prebuilt(value as object, `${`{"${key}":`.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`)
}

/** JSON text nested `depth` deep, for links that take text (JSON.stringify would recurse). */
export const deepText = (depth: number): string => "[".repeat(depth) + "]".repeat(depth)

const oddString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.integer({ min: 1_000, max: 70_000 }).map((length) => "x".repeat(length))
)

const wide = (keys: number) => Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, i]))

// Built once: a few depths and widths either side of every bound, shared by all cases (decoders never mutate
// their input), because building a 12,000-deep value per case would cost more than decoding it.
const BIG: ReadonlyArray<unknown> = [
  ...[65, 200, 1_000, 5_000, 12_000].flatMap((depth) => [deepArray(depth), deepObject(depth)]),
  wide(100),
  wide(1_000),
  wide(5_000)
]
/** Any value a hostile peer might put where a field is expected. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 6, arbitrary: fc.constantFrom(...wrongTypes) },
  { weight: 2, arbitrary: oddString },
  { weight: 1, arbitrary: fc.double() },
  { weight: 2, arbitrary: fc.constantFrom(...BIG) }
)

/**
 * An object shaped like a message: each of `fields` present or not, with a plausible value or a hostile one, plus
 * sometimes a key nobody declared.
 */
export const shapedLike = (fields: Readonly<Record<string, fc.Arbitrary<unknown>>>): fc.Arbitrary<unknown> =>
  fc
    .tuple(
      fc.record(
        Object.fromEntries(
          Object.entries(fields).map(([key, plausible]) => [key, fc.oneof(plausible, hostileValue)])
        ) as Record<string, fc.Arbitrary<unknown>>,
        { requiredKeys: [] }
      ),
      fc.option(fc.tuple(fc.string({ maxLength: 12 }), hostileValue), { freq: 4 })
    )
    .map(([shaped, extra]) => (extra === null ? shaped : { ...shaped, [extra[0]]: extra[1] }))

const INVALID_UTF8: ReadonlyArray<ReadonlyArray<number>> = [
  [0xff],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf8, 0x88, 0x80]
]

/** The bytes of `text` as they are (mode 0), cut at `at` (1), or with invalid UTF-8 inserted at `at` (2). */
const mangle = (text: string, mode: number, at: number, bad: number): Buffer => {
  const bytes = Buffer.from(text, "utf8")
  const cut = at % (bytes.length + 1)
  if (mode === 0) return bytes
  if (mode === 1) return bytes.subarray(0, cut)
  return Buffer.concat([
    bytes.subarray(0, cut),
    Buffer.from(INVALID_UTF8[bad % INVALID_UTF8.length]!),
    bytes.subarray(cut)
  ])
}

/** JSON text of `values` (or deep text, or noise), as bytes that may be truncated or hold invalid UTF-8. */
export const hostileBytes = (values: fc.Arbitrary<unknown>): fc.Arbitrary<Buffer> =>
  fc.oneof(
    {
      weight: 12,
      arbitrary: fc
        .tuple(values, fc.constantFrom(0, 0, 1, 2), fc.nat(), fc.nat())
        .map(([value, mode, at, bad]) => mangle(safeStringify(value), mode, at, bad))
    },
    { weight: 1, arbitrary: fc.constantFrom(65, 1_000, 12_000).map((depth) => Buffer.from(deepText(depth))) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) }
  )

const SENTINEL = /"@@prebuilt:(\d+)@@"/g

/** JSON.stringify that splices in the text of the prebuilt deep values instead of recursing into them. */
export const safeStringify = (value: unknown): string => {
  const texts: Array<string> = []
  const json = JSON.stringify(value, (_key, item: unknown) => {
    const text = typeof item === "object" && item !== null ? PREBUILT_TEXT.get(item) : undefined
    if (text === undefined) return item
    texts.push(text)
    return `@@prebuilt:${texts.length - 1}@@`
  })
  if (json === undefined) return "null"
  return texts.length === 0 ? json : json.replace(SENTINEL, (_match, index: string) => texts[Number(index)]!)
}

/** Where a probe's seed comes from: PEDELEC_FAULTS_SEED replays a run; otherwise a fresh one, printed. */
export const faultSeed = (): number => {
  const given = process.env.PEDELEC_FAULTS_SEED
  return given === undefined || given === "" ? Math.floor(Math.random() * 2 ** 31) : Number(given)
}

/** `count` values of `arbitrary` for `seed`: the same seed gives the same cases, so a failure replays. */
export const casesOf = <A>(arbitrary: fc.Arbitrary<A>, seed: number, count: number): Array<A> =>
  fc.sample(arbitrary, { seed, numRuns: count })
