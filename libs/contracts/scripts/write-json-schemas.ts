// Writes schemas/<Name>.schema.json for every public shape; a test fails when the committed files are stale.
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { PUBLIC_SCHEMAS, type PublicSchemaName, toJsonSchema } from "../src/node/JsonSchemas.ts"

export const schemasDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "schemas")

export const renderJsonSchema = (name: PublicSchemaName): string => `${JSON.stringify(toJsonSchema(name), null, 2)}\n`

const main = async () => {
  await mkdir(schemasDir, { recursive: true })
  for (const name of Object.keys(PUBLIC_SCHEMAS) as Array<PublicSchemaName>) {
    await writeFile(path.join(schemasDir, `${name}.schema.json`), renderJsonSchema(name))
  }
  console.log(`wrote ${Object.keys(PUBLIC_SCHEMAS).length} JSON Schemas to ${path.relative(process.cwd(), schemasDir)}`)
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
