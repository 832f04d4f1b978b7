/**
 * Every Schema of contracts round-trips: a value generated from the schema encodes, decodes (strictly, with
 * onExcessProperty "error") to an equal value, and survives the trip through JSON text that every link makes.
 * The last suite fails when a module of src exports a Schema that the table in schemas.ts does not list.
 */
import { readdirSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { PedelecError } from "../src/PedelecError.ts"
import { type AnyCodec, rpcSuccess, SCHEMAS } from "./schemas.ts"

const RUNS = 50
const strict = { onExcessProperty: "error" } as const

const successOf = <A>(exit: Exit.Exit<A, Schema.SchemaError>, what: string): A => {
  if (Exit.isSuccess(exit)) return exit.value
  return assert.fail(`${what} failed: ${String(Cause.squash(exit.cause))}`)
}

/** Deep equality; a PedelecError is compared by its fields, since Error instances carry a stack. */
const assertSameValue = (actual: unknown, expected: unknown): void => {
  if (expected instanceof PedelecError) {
    assert.instanceOf(actual, PedelecError)
    assert.strictEqual(actual._tag, "PedelecError")
    assert.deepStrictEqual(actual.toWire(), expected.toWire())
  } else {
    assert.deepStrictEqual(actual, expected)
  }
}

const assertRoundTrip = (schema: AnyCodec, value: unknown): void => {
  const encoded = successOf(Schema.encodeUnknownExit(schema)(value), "encode")
  assertSameValue(successOf(Schema.decodeUnknownExit(schema)(encoded, strict), "decode"), value)
  // Void payloads (rpcs without one) never travel as JSON text.
  if (encoded === undefined) return
  const text = JSON.stringify(encoded)
  const fromText = successOf(Schema.decodeUnknownExit(schema)(JSON.parse(text), strict), "decode from JSON text")
  assert.strictEqual(JSON.stringify(successOf(Schema.encodeUnknownExit(schema)(fromText), "re-encode")), text)
}

describe("generated values round-trip", () => {
  for (const { name, schema } of SCHEMAS.filter((row) => row.derived)) {
    it.prop(name, [schema], ([value]) => assertRoundTrip(schema, value), { arbitrary: { runs: RUNS } })
  }
})

describe("hand-written values round-trip", () => {
  const rows = SCHEMAS.filter((row) => row.examples.length > 0)
  it.each(rows)("$name", ({ schema, examples }) => {
    for (const example of examples) assertRoundTrip(schema, example)
  })
})

describe("the table lists every exported Schema", () => {
  const covered = new Set<unknown>(SCHEMAS.map((row) => row.schema))

  it("names each schema once", () => {
    const names = SCHEMAS.map((row) => row.name)
    assert.deepStrictEqual(
      names.filter((name, index) => names.indexOf(name) !== index),
      []
    )
  })

  /** The schemas an export carries: itself, an rpc group's payloads and successes, a map's schemas and methods. */
  const carriedSchemas = (value: unknown): ReadonlyArray<unknown> => {
    if (Schema.isSchema(value)) return [value]
    if ((typeof value === "function" || typeof value === "object") && value !== null) {
      if ("requests" in value && value.requests instanceof Map) {
        return [...value.requests.values()].flatMap((rpc) => [rpc.payloadSchema, rpcSuccess(rpc)])
      }
      if (typeof value === "object") {
        return Object.values(value).flatMap((entry: unknown) =>
          Schema.isSchema(entry)
            ? [entry]
            : typeof entry === "object" && entry !== null && "params" in entry && "result" in entry
              ? [entry.params, entry.result]
              : []
        )
      }
    }
    return []
  }

  const srcDir = new URL("../src/", import.meta.url)
  const files = readdirSync(srcDir, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"))

  it.each(files)("src/%s", async (file) => {
    const module: Record<string, unknown> = await import(new URL(file, srcDir).href)
    const missing = Object.entries(module).flatMap(([name, value]) =>
      carriedSchemas(value).some((schema) => !covered.has(schema)) ? [name] : []
    )
    assert.deepStrictEqual(missing, [], `exported schemas missing from test/schemas.ts in src/${file}`)
  })
})
