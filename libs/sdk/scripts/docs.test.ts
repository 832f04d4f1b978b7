// The docs as a page author reads them (docs/**/*.md), held to the code: every ```ts sample type-checks strictly
// against the SDK's source entry (each sample is its own module, importing `@pedelec/sdk` as a page does; only
// blocks marked ```ts fragment are skipped), and the guide's error table lists every code of the contracts' catalog
// once with its `retryable` flag, so a new code fails here until it is documented. The samples are compiled in
// memory (virtual files beside this test, so the workspace's node_modules resolve); nothing is written.
import { readdirSync, readFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { ERROR_CATALOG } from "@pedelec/contracts/catalog/full"
import { ERROR_CODES } from "@pedelec/contracts/ErrorCode"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const sdkRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const workspaceRoot = path.resolve(sdkRoot, "../..")
const docsRoot = path.join(workspaceRoot, "docs")

const markdownFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "api" ? [] : markdownFiles(full)
    return entry.name.endsWith(".md") ? [full] : []
  })

interface Sample {
  readonly file: string
  readonly line: number
  readonly info: string
  readonly code: string
}

const FENCE = /^```(\S*)(.*)$/

const samplesOf = (file: string): ReadonlyArray<Sample> => {
  const lines = readFileSync(file, "utf8").split("\n")
  const samples: Array<Sample> = []
  let open: { line: number; lang: string; info: string; body: Array<string> } | undefined
  lines.forEach((text, index) => {
    const fence = FENCE.exec(text.trim())
    if (open === undefined) {
      if (fence !== null && fence[1] !== "")
        open = { line: index + 1, lang: fence[1]!, info: fence[2]!.trim(), body: [] }
      return
    }
    if (text.trim() === "```") {
      if (["ts", "typescript", "tsx"].includes(open.lang))
        samples.push({ file, line: open.line, info: open.info, code: open.body.join("\n") })
      open = undefined
    } else open.body.push(text)
  })
  return samples
}

const docs = markdownFiles(docsRoot)
const samples = docs.flatMap(samplesOf)
const checked = samples.filter((sample) => !sample.info.split(/\s+/).includes("fragment"))

// The SDK's own compiler options (a page's strictest), read as tsc reads them.
const sdkConfig = ts.getParsedCommandLineOfConfigFile(path.join(sdkRoot, "tsconfig.json"), undefined, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
    throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
  }
})

const compilerOptions: ts.CompilerOptions = {
  ...sdkConfig?.options,
  strict: true,
  noEmit: true,
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
  types: [],
  // A sample shows one thing; a helper it declares for the reader need not be used.
  noUnusedLocals: false,
  noUnusedParameters: false
}

/** Type-checks every sample as a virtual module under libs/sdk/scripts/; returns the diagnostics by sample. */
const typeCheck = (list: ReadonlyArray<Sample>): ReadonlyArray<string> => {
  const virtual = new Map(
    list.map((sample, index) => [path.join(sdkRoot, "scripts", `.doc-sample-${index}.ts`), sample])
  )
  const host = ts.createCompilerHost(compilerOptions, true)
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name)
  host.readFile = (name) => virtual.get(name)?.code ?? readFile.call(host, name)
  host.getSourceFile = (name, language, ...rest) => {
    const sample = virtual.get(name)
    return sample === undefined
      ? getSourceFile.call(host, name, language, ...rest)
      : ts.createSourceFile(name, sample.code, language, true)
  }
  const program = ts.createProgram([...virtual.keys()], compilerOptions, host)
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const sample = diagnostic.file === undefined ? undefined : virtual.get(diagnostic.file.fileName)
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")
    if (sample === undefined || diagnostic.file === undefined || diagnostic.start === undefined) return text
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    return `${path.relative(workspaceRoot, sample.file)}:${sample.line + 1 + line}: ${text}`
  })
}

/** The rows of the first table under `heading` whose first cell is a backticked code. */
const codeRows = (file: string, heading: string): ReadonlyArray<ReadonlyArray<string>> => {
  const text = readFileSync(path.join(docsRoot, file), "utf8")
  const start = text.indexOf(`\n${heading}\n`)
  if (start === -1) throw new Error(`${file} has no heading "${heading}"`)
  const cells = (line: string) =>
    line
      .replace(/\\\|/g, "\uE000")
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.replace(/\uE000/g, "|").trim())
  return text
    .slice(start)
    .split("\n")
    .filter((line) => /^\|\s*`[A-Z][A-Z0-9_]*`\s*\|/.test(line))
    .map(cells)
}

const codeOf = (row: ReadonlyArray<string>) => row[0]!.replace(/`/g, "")

describe("docs", () => {
  it("has samples, and marks few as fragments", () => {
    expect(checked.length).toBeGreaterThanOrEqual(10)
    expect(samples.length - checked.length).toBeLessThanOrEqual(3)
  })

  it("type-checks every ts sample strictly against the SDK's source", () => {
    expect(typeCheck(checked)).toEqual([])
  }, 120_000)

  it("lists every error code once in the guide's table, with its retryable flag", () => {
    const rows = codeRows("guide/errors.md", "## Every code")
    const listed = rows.map(codeOf)
    expect([...listed].sort()).toEqual([...ERROR_CODES].sort())
    for (const row of rows) {
      const code = codeOf(row) as keyof typeof ERROR_CATALOG
      expect(`${code}: ${row[1]}`).toBe(`${code}: ${ERROR_CATALOG[code].retryable ? "yes" : "no"}`)
    }
  })

  it("troubleshoots only codes that exist, each once", () => {
    const listed = codeRows("install.md", "## Troubleshooting").map(codeOf)
    expect(listed.length).toBeGreaterThan(0)
    expect(listed.filter((code) => !(ERROR_CODES as ReadonlyArray<string>).includes(code))).toEqual([])
    expect(new Set(listed).size).toBe(listed.length)
  })
})
