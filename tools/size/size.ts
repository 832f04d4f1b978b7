// Bundle-size budget: bundles a project's browser-facing modules the way a page would get them (esbuild, minified,
// ESM, browser platform) and fails when min+gzip exceeds the budget. Every export is kept (`export * as`), so the
// figure is the worst case a page pays, not what tree shaking happens to leave for one import.
// Usage: tsx tools/size/size.ts --name <label> --limit <bytes> <file-or-dir>... [--exclude <dir>]...

import { readdir, stat } from "node:fs/promises"
import path from "node:path"
import { gzipSync } from "node:zlib"
import { build } from "esbuild"

interface Options {
  readonly name: string
  readonly limit: number
  readonly inputs: ReadonlyArray<string>
  readonly excludes: ReadonlyArray<string>
}

const parseArgs = (argv: ReadonlyArray<string>): Options => {
  let name = "bundle"
  let limit = Number.NaN
  const inputs: Array<string> = []
  const excludes: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--name") name = argv[++i] ?? name
    else if (arg === "--limit") limit = Number(argv[++i])
    else if (arg === "--exclude") excludes.push(path.resolve(argv[++i] ?? ""))
    else inputs.push(arg)
  }
  if (!Number.isInteger(limit) || limit <= 0 || inputs.length === 0) {
    throw new Error("usage: size.ts --name <label> --limit <bytes> <file-or-dir>... [--exclude <dir>]...")
  }
  return { name, limit, inputs, excludes }
}

const modulesUnder = async (input: string, excludes: ReadonlyArray<string>): Promise<Array<string>> => {
  const full = path.resolve(input)
  if (excludes.some((dir) => full === dir || full.startsWith(`${dir}${path.sep}`))) return []
  if (!(await stat(full)).isDirectory()) return full.endsWith(".ts") && !full.endsWith(".d.ts") ? [full] : []
  const entries = await readdir(full)
  const nested = await Promise.all(entries.sort().map((entry) => modulesUnder(path.join(full, entry), excludes)))
  return nested.flat()
}

export interface SizeReport {
  readonly modules: number
  readonly minifiedBytes: number
  readonly gzipBytes: number
}

export const measure = async (modules: ReadonlyArray<string>): Promise<SizeReport> => {
  const contents = modules.map((file, index) => `export * as m${index} from ${JSON.stringify(file)}`).join("\n")
  const result = await build({
    stdin: { contents, resolveDir: process.cwd(), sourcefile: "size-entry.ts", loader: "ts" },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent"
  })
  const code = result.outputFiles[0]!.contents
  return { modules: modules.length, minifiedBytes: code.byteLength, gzipBytes: gzipSync(code, { level: 9 }).byteLength }
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`

const main = async () => {
  const options = parseArgs(process.argv.slice(2))
  const modules = (await Promise.all(options.inputs.map((input) => modulesUnder(input, options.excludes)))).flat()
  const report = await measure(modules)
  const verdict = report.gzipBytes <= options.limit ? "within" : "OVER"
  console.log(
    `${options.name}: ${kb(report.gzipBytes)} min+gzip (${kb(report.minifiedBytes)} min, ${report.modules} modules), ` +
      `${verdict} the ${kb(options.limit)} budget`
  )
  if (report.gzipBytes > options.limit) {
    console.error(`${options.name} is over budget: import Effect by module path and keep node-only code out.`)
    process.exit(1)
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  await main()
}
