import { spawnSync } from "node:child_process"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import type { RuleId } from "./check.ts"
import { checkBoundaries } from "./check.ts"

const here = path.dirname(fileURLToPath(import.meta.url))
const script = path.join(here, "check.ts")
const workspaceRoot = path.resolve(here, "../..")

type Files = Record<string, string | object>

const pkg = (short: string, type: string, platform: string, deps: ReadonlyArray<string> = []) => ({
  name: `@pedelec/${short}`,
  private: true,
  type: "module",
  dependencies: Object.fromEntries(deps.map((d) => [`@pedelec/${d}`, "*"])),
  nx: { name: short, tags: [`type:${type}`, `platform:${platform}`] }
})

// A small but complete workspace whose imports exercise every allowed edge, so each rule test plants exactly one bug.
const clean: Files = {
  "package.json": { name: "fixture", private: true, workspaces: ["libs/*", "apps/*"], dependencies: { effect: "4" } },
  "libs/contracts/package.json": pkg("contracts", "lib", "neutral"),
  "libs/contracts/src/ErrorCode.ts": `import * as Schema from "effect/Schema"\nexport const CATALOG = {\n  SESSION_BUSY: { message: "busy" },\n  TOOL_TIMEOUT: { message: "late" }\n}\nexport const ErrorCode = Schema.Literals(["SESSION_BUSY", "TOOL_TIMEOUT"])\n`,
  "libs/contracts/src/node/ArgsValidator.ts": `import { RE2JS } from "re2js"\nimport { Rpc } from "effect/rpc"\nimport { ErrorCode } from "../ErrorCode.ts"\nexport { RE2JS, Rpc, ErrorCode }\n`,
  "libs/contracts/test/ErrorCode.test.ts": `import { Effect } from "effect"\nimport { it } from "@effect/vitest"\nimport { describe } from "vitest"\nimport fc from "fast-check"\nimport path from "node:path"\nimport { ErrorCode } from "../src/ErrorCode.ts"\nimport { ArgsValidator } from "@pedelec/contracts/node/ArgsValidator"\n`,
  "libs/contracts/scripts/write.ts": `import { writeFile } from "node:fs/promises"\nimport { ErrorCode } from "../src/ErrorCode.ts"\n`,
  "libs/core/package.json": pkg("core", "lib", "node", ["contracts"]),
  "libs/core/src/index.ts": `import { Effect } from "effect"\nimport { ArgsValidator } from "@pedelec/contracts/node/ArgsValidator"\nimport { readFile } from "node:fs/promises"\nimport { NodeRuntime } from "@effect/platform-node"\nexport * from "./run.ts"\n`,
  "libs/core/src/run.ts": `export const run = () => import("node:child_process")\n`,
  "libs/sdk/package.json": pkg("sdk", "lib", "browser", ["contracts"]),
  "libs/sdk/src/index.ts": `import * as Effect from "effect/Effect"\nimport { ErrorCode } from "@pedelec/contracts/ErrorCode"\nexport { Effect, ErrorCode }\nexport const busy = (code: string) => code === "SESSION_BUSY" ? fail("SESSION_BUSY", { tool: "x" }) : undefined\n`,
  "libs/sdk/test/index.test.ts": `import { Effect } from "effect"\nimport { expect } from "vitest"\nimport { ErrorCode } from "../src/index.ts"\n`,
  "libs/sdk/scripts/bundle.ts": `import { build } from "esbuild"\nimport { readFile } from "node:fs/promises"\n`,
  "apps/extension/package.json": pkg("extension", "app", "browser", ["contracts", "sdk"]),
  "apps/extension/src/background.tsx": `import * as Schema from "effect/Schema"\nimport { sdk } from "@pedelec/sdk"\n`,
  "libs/core-client/package.json": pkg("core-client", "lib", "node", ["contracts"]),
  "libs/core-client/src/CoreClient.ts": `import { Rpc } from "effect/rpc"\nexport const connectHost = () => Rpc\n`,
  "apps/cli/package.json": pkg("cli", "app", "node", ["core-client", "contracts"]),
  "apps/cli/src/main.mts": `import { connectHost } from "@pedelec/core-client/CoreClient"\nconst x = require("execa")\nexport { x, connectHost }\n`,
  "apps/core-daemon/package.json": pkg("core-daemon", "app", "node", ["core", "core-client"]),
  "apps/core-daemon/src/main.ts": `import { run } from "@pedelec/core"\nimport { connectHost } from "@pedelec/core-client/CoreClient"\n`
}

const roots: Array<string> = []
afterAll(() => Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true }))))

const fixture = async (overrides: Files = {}): Promise<string> => {
  const root = await mkdtemp(path.join(os.tmpdir(), "pedelec-boundaries-"))
  roots.push(root)
  for (const [rel, content] of Object.entries({ ...clean, ...overrides })) {
    const file = path.join(root, rel)
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, typeof content === "string" ? content : JSON.stringify(content, null, 2))
  }
  return root
}

const found = async (overrides: Files) =>
  (await checkBoundaries(await fixture(overrides))).map((v) => ({ rule: v.rule, file: v.file, specifier: v.specifier }))

const expectOnly = async (overrides: Files, rule: RuleId, file: string, specifier?: string) => {
  const violations = await found(overrides)
  expect(violations).toEqual([{ rule, file, specifier: specifier ?? expect.any(String) }])
}

describe("checkBoundaries", () => {
  it("accepts a clean workspace", async () => {
    expect(await checkBoundaries(await fixture())).toEqual([])
  })

  // It parses every file of the workspace: ~8 s alone on 2 cores, and over 30 s beside the other Nx tasks of a
  // clean-clone CI run on a slow VM (the rest of the suite took twice its usual time that day).
  it("accepts the real workspace", { timeout: 120_000 }, async () => {
    expect(await checkBoundaries(workspaceRoot)).toEqual([])
  })

  it.each([
    ["@pedelec/core"],
    ["node:fs"],
    ["fs/promises"],
    ["@pedelec/contracts/node/ArgsValidator"],
    ["effect/rpc"],
    ["effect/rpc/RpcServer"],
    ["@effect/platform-node"],
    ["@effect/platform-node-shared/NodeStream"]
  ])("browser-imports-node: a browser lib imports %s", async (spec) => {
    const overrides = {
      "libs/sdk/package.json": pkg("sdk", "lib", "browser", ["contracts", "core"]),
      "libs/sdk/src/bad.ts": `import { x } from "${spec}"\n`
    }
    await expectOnly(overrides, "browser-imports-node", "libs/sdk/src/bad.ts", spec)
  })

  it("browser-imports-node also covers tests and dynamic imports, but not scripts/", async () => {
    const test = `export const f = () => import("node:path")\n`
    await expectOnly({ "apps/extension/test/a.test.ts": test }, "browser-imports-node", "apps/extension/test/a.test.ts")
    expect(await found({ "apps/extension/scripts/pack.ts": test })).toEqual([])
  })

  it("browser-effect-barrel: browser and neutral src may not import the effect barrel; tests may", async () => {
    const barrel = `export { Effect } from "effect"\n`
    await expectOnly({ "libs/sdk/src/bad.ts": barrel }, "browser-effect-barrel", "libs/sdk/src/bad.ts", "effect")
    await expectOnly({ "libs/contracts/src/Bad.ts": barrel }, "browser-effect-barrel", "libs/contracts/src/Bad.ts")
    expect(await found({ "apps/extension/test/ok.test.ts": barrel, "libs/core/src/ok.ts": barrel })).toEqual([])
  })

  it("lib-imports-app: a lib imports an app", async () => {
    const overrides = {
      "libs/core/package.json": pkg("core", "lib", "node", ["contracts", "cli"]),
      "libs/core/src/bad.ts": `import { main } from "@pedelec/cli/main"\n`
    }
    await expectOnly(overrides, "lib-imports-app", "libs/core/src/bad.ts", "@pedelec/cli/main")
  })

  it("app-imports-app: an app imports another app (the desktop app registers the host as pedelec-cli does)", async () => {
    const overrides = {
      "apps/desktop/package.json": pkg("desktop", "app", "node", ["cli"]),
      "apps/desktop/src/main/HostManifests.ts": `const cli = require("@pedelec/cli/commands/nativeHost")\n`
    }
    await expectOnly(
      overrides,
      "app-imports-app",
      "apps/desktop/src/main/HostManifests.ts",
      "@pedelec/cli/commands/nativeHost"
    )
  })

  it("core-internals: an app other than core-daemon and desktop imports Core; desktop may", async () => {
    const cli = {
      "apps/cli/package.json": pkg("cli", "app", "node", ["core", "core-client", "contracts"]),
      "apps/cli/src/bad.ts": `import { CorePaths } from "@pedelec/core/CorePaths"\n`
    }
    await expectOnly(cli, "core-internals", "apps/cli/src/bad.ts", "@pedelec/core/CorePaths")
    const host = {
      "apps/native-host/package.json": pkg("native-host", "app", "node", ["core"]),
      "apps/native-host/test/harness.ts": `import { run } from "@pedelec/core"\n`
    }
    await expectOnly(host, "core-internals", "apps/native-host/test/harness.ts", "@pedelec/core")
    const desktop = {
      "apps/desktop/package.json": pkg("desktop", "app", "node", ["core", "core-client"]),
      "apps/desktop/src/main/core/CoreAccess.ts": `import { run } from "@pedelec/core"\nimport { connectHost } from "@pedelec/core-client/CoreClient"\n`
    }
    expect(await found(desktop)).toEqual([])
  })

  it.each([
    ["src/Bad.ts", "re2js"],
    ["src/Bad.ts", "effect/rpc"],
    ["src/Bad.ts", "./node/ArgsValidator.ts"],
    ["src/Bad.ts", "node:fs"],
    ["src/Bad.ts", "@pedelec/contracts/ErrorCode"],
    ["src/node/Bad.ts", "@effect/platform-node"],
    ["src/sub/Bad.ts", "../node/ArgsValidator.ts"],
    ["test/Bad.test.ts", "execa"]
  ])("contracts-imports: libs/contracts/%s imports %s", async (rel, spec) => {
    const file = `libs/contracts/${rel}`
    await expectOnly({ [file]: `import { x } from "${spec}"\n` }, "contracts-imports", file, spec)
  })

  it("relative-escape: a relative import leaves its project", async () => {
    const overrides = { "apps/cli/src/bad.ts": `import { run } from "../../../libs/core/src/run.ts"\n` }
    await expectOnly(overrides, "relative-escape", "apps/cli/src/bad.ts")
  })

  it("undeclared-dependency: importing an undeclared or unknown workspace project", async () => {
    const undeclared = { "libs/core/src/bad.ts": `import { sdk } from "@pedelec/sdk"\n` }
    await expectOnly(undeclared, "undeclared-dependency", "libs/core/src/bad.ts", "@pedelec/sdk")
    const unknown = { "libs/core/src/bad.ts": `import { run } from "@pedelec/providers/run"\n` }
    await expectOnly(unknown, "undeclared-dependency", "libs/core/src/bad.ts", "@pedelec/providers/run")
  })

  it.each([
    ["package.json", "dependencies", "@effect/schema"],
    ["libs/core/package.json", "devDependencies", "@effect/rpc"],
    ["tools/package.json", "peerDependencies", "@effect/schema"]
  ])("banned-package: %s lists %s %s", async (file, field, name) => {
    const existing = clean[file]
    const base = typeof existing === "object" ? existing : pkg("tools", "tool", "node")
    await expectOnly({ [file]: { ...base, [field]: { [name]: "0.1.0" } } }, "banned-package", file, name)
  })

  it.each([
    ["a missing platform tag", { nx: { name: "sdk", tags: ["type:lib"] } }],
    ["two type tags", { nx: { name: "sdk", tags: ["type:lib", "type:app", "platform:browser"] } }],
    ["no nx.name", { nx: { tags: ["type:lib", "platform:browser"] } }]
  ])("project-tags: %s", async (_, nx) => {
    const json = { ...pkg("sdk", "lib", "browser", ["contracts"]), ...nx }
    await expectOnly({ "libs/sdk/package.json": json }, "project-tags", "libs/sdk/package.json")
  })

  it.each([
    ["a catalog key", `export const mine = { SESSION_BUSY: { message: "busy" } }\n`],
    ["a quoted catalog key", `export const mine = { "TOOL_TIMEOUT": 1 }\n`],
    ["a Literals schema", `export const Code = Schema.Literals(["OTHER", "SESSION_BUSY"])\n`],
    ["a type alias", `export type Code = "OTHER" | 'TOOL_TIMEOUT'\n`],
    ["a multi-line union", `export type Code =\n  | "OTHER"\n  | "SESSION_BUSY"\nexport const x = 1\n`]
  ])("error-code-redefined: %s outside contracts", async (_, text) => {
    const violations = await found({ "libs/core/src/codes.ts": text })
    expect(violations).toHaveLength(1)
    expect(violations[0]).toMatchObject({ rule: "error-code-redefined", file: "libs/core/src/codes.ts" })
  })

  it("error-code-redefined: using a code after an unrelated type alias is not a definition", async () => {
    const text = `export type Reason = "late" | "gone"\nexport const code = (r: Reason) => (r === "late" ? "TOOL_TIMEOUT" : "SESSION_BUSY")\n`
    expect(await found({ "libs/core/src/uses.ts": text })).toEqual([])
  })

  it("function-too-long: a product function over 100 lines is refused; the same in a test is not", async () => {
    const body = Array.from({ length: 100 }, (_, i) => `  const v${i} = ${i}`).join("\n")
    const long = `export const big = () => {\n${body}\n  return 0\n}\n`
    const edge = `export const edge = () => {\n${Array.from({ length: 98 }, () => "  void 0").join("\n")}\n}\n`
    const violations = await checkBoundaries(
      await fixture({ "libs/core/src/Big.ts": long, "libs/core/src/Edge.ts": edge, "libs/core/test/Big.test.ts": long })
    )
    expect(violations.map((v) => [v.rule, v.file, v.specifier])).toEqual([
      ["function-too-long", "libs/core/src/Big.ts", "line 1"]
    ])
    expect(violations[0]?.message).toMatch(/module-level functions/)
  })

  it("messages say what to do instead", async () => {
    const [violation] = await checkBoundaries(await fixture({ "libs/sdk/src/bad.ts": `import "effect"\n` }))
    expect(violation?.message).toMatch(/effect\/Schema/)
  })
})

describe("check.ts as a script", () => {
  const run = (root: string) =>
    spawnSync(process.execPath, ["--import", "tsx", script, root], { cwd: workspaceRoot, encoding: "utf8" })

  it("exits 1 and names the rule on a violating workspace", async () => {
    const result = run(await fixture({ "libs/sdk/src/bad.ts": `import { readFile } from "node:fs"\n` }))
    expect(result.status).toBe(1)
    expect(`${result.stdout}${result.stderr}`).toContain("browser-imports-node")
    expect(`${result.stdout}${result.stderr}`).toContain("libs/sdk/src/bad.ts")
  })

  it("exits 0 with a one-line summary on a clean workspace", async () => {
    const result = run(await fixture())
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout.trim()).toMatch(/^boundaries OK: 7 projects, \d+ files checked$/)
  })
})
