// Error-code ownership: every error code is defined once, in libs/contracts/src/ErrorCode.ts. Other projects may use
// a code (`PedelecError.fromCode("SESSION_BUSY", …)`) but not define one: no catalog key, no Literal/Literals of it,
// no type alias naming it. A second definition is how `THREAD_BUSY` ended up beside `SESSION_BUSY` last time.

import { readFile } from "node:fs/promises"
import path from "node:path"

export const CATALOG_FILE = "libs/contracts/src/ErrorCode.ts"

/** The codes of the catalog, read from its source so this check needs no TypeScript runtime of contracts. */
export const readCatalogCodes = async (root: string): Promise<ReadonlyArray<string>> => {
  const text = await readFile(path.join(root, CATALOG_FILE), "utf8").catch(() => "")
  return [...text.matchAll(/^ {2}([A-Z][A-Z0-9_]+): spec\(/gm)].map((match) => match[1]!)
}

/** Codes the text defines rather than uses. Codes are UPPER_SNAKE_CASE, so they need no regex escaping. */
export const redefinedCodes = (text: string, codes: ReadonlyArray<string>): Array<string> =>
  codes.filter((code) => {
    const quoted = `["'\`]${code}["'\`]`
    const definitions = [
      new RegExp(`(^|[{,\\s])${code}\\s*:`, "m"),
      new RegExp(`["']${code}["']\\s*:`),
      new RegExp(`Literals?\\(\\s*\\[?[^)]*${quoted}`),
      new RegExp(`\\btype\\s+\\w+\\s*=[^;]*${quoted}`)
    ]
    return definitions.some((pattern) => pattern.test(text))
  })
