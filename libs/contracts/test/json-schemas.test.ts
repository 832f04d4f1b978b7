import { readFile } from "node:fs/promises"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { renderJsonSchema, schemasDir } from "../scripts/write-json-schemas.ts"
import { PUBLIC_SCHEMAS, type PublicSchemaName, toJsonSchema } from "../src/node/JsonSchemas.ts"

const names = Object.keys(PUBLIC_SCHEMAS) as Array<PublicSchemaName>

describe("JSON Schema export", () => {
  it.each(names)("schemas/%s.schema.json is up to date (run `npm run schemas -w @pedelec/contracts`)", async (name) => {
    const committed = await readFile(path.join(schemasDir, `${name}.schema.json`), "utf8")
    assert.strictEqual(committed, renderJsonSchema(name))
  })

  it("documents closed objects, as every decoder runs with onExcessProperty: error", () => {
    const text = JSON.stringify(names.map(toJsonSchema))
    assert.notInclude(text, '"additionalProperties":true')
  })

  it("keeps the argsSchema recursion as a $ref, not an expansion", () => {
    const document = toJsonSchema("ArgsSchema")
    assert.strictEqual(document.$ref, "#/$defs/ArgsSchema")
    assert.property(document.$defs, "ArgsSchemaNode")
  })
})
