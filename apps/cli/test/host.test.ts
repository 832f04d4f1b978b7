// pedelec-cli's user commands end to end (host role): settings get/set and providers, the built CLI against a
// FakeCore that checks core.json's launch secret. Secrets go in and never come back out.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeCore, LAUNCH_SECRET, PROVIDERS, removeHomes, startFakeCore, writeRuntime } from "./FakeCore.ts"
import { oneLine, runCli } from "./runCli.ts"

let fake: FakeCore

const cli = (args: ReadonlyArray<string>, stdin?: string) =>
  runCli(args, { env: { PEDELEC_HOME: fake.home }, ...(stdin === undefined ? {} : { stdin }) })

beforeAll(async () => {
  fake = await startFakeCore()
})

afterAll(async () => {
  await fake.close()
  removeHomes()
})

describe("settings", () => {
  it("get prints the public settings as JSON text, or the JSON line with --json", async () => {
    const text = await cli(["settings", "get"])
    expect(text.code).toBe(0)
    expect(JSON.parse(text.stdout)).toMatchObject({ defaultProvider: null, secretsSet: { ollamaApiKey: false } })
    const line = oneLine(await cli(["settings", "get", "--json"]))
    expect(line).toMatchObject({ ok: true, result: { defaultEffortLevel: "medium" } })
  })

  it("set round-trips dotted keys, JSON values and plain text", async () => {
    const provider = await cli(["settings", "set", "defaultProvider", "codex"])
    expect(provider.code).toBe(0)
    expect(JSON.parse(provider.stdout).defaultProvider).toBe("codex")
    await cli(["settings", "set", "ollama.baseUrl", "http://10.0.0.2:11434"])
    await cli(["settings", "set", "ollama.timeoutMs", "60000"])
    await cli(["settings", "set", "defaultModels.claude", "sonnet"])
    const after = JSON.parse((await cli(["settings", "get"])).stdout)
    expect(after).toMatchObject({
      defaultProvider: "codex",
      defaultModels: { claude: "sonnet" },
      ollama: { baseUrl: "http://10.0.0.2:11434", timeoutMs: 60_000 }
    })
    // null clears: a nullable key becomes null, an optional one goes away.
    await cli(["settings", "set", "defaultModels.claude", "null"])
    const cleared = oneLine(await cli(["settings", "set", "defaultProvider", "null", "--json"]))
    expect(cleared.result).toMatchObject({ defaultProvider: null, defaultModels: {} })
  })

  it("validates with the contracts schema before sending: exit 2, Core's settings untouched", async () => {
    const sets = fake.recorded.settingsSets
    const bad = await cli(["settings", "set", "ollama.baseUrl", "ftp://example.com"])
    expect(bad.code).toBe(2)
    expect(bad.stdout).toBe("")
    expect(bad.stderr).toContain("http(s) URL")
    expect(bad.stderr).toContain("SETTINGS_INVALID")
    const level = oneLine(await cli(["settings", "set", "defaultEffortLevel", "extreme", "--json"]))
    expect((level.error as { code: string }).code).toBe("SETTINGS_INVALID")
    for (const key of ["nope", "ollama.port", "defaultModels.notaprovider", "__proto__.x"]) {
      const unknown = await cli(["settings", "set", key, "1"])
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toContain("Unknown settings key")
    }
    expect(fake.recorded.settingsSets).toBe(sets)
  })

  it("takes ollama.apiKey only from stdin: the argv form (readable in /proc/<pid>/cmdline) is refused", async () => {
    const secrets = fake.recorded.secrets.ollamaApiKey
    const viaArgv = await cli(["settings", "set", "ollama.apiKey", "sk-from-argv", "--json"])
    const error = oneLine(viaArgv).error as { code: string; message: string }
    expect(`${error.code} exit ${viaArgv.code}`).toBe("INVALID_INPUT exit 2")
    expect(error.message).toContain("pedelec-cli settings set ollama.apiKey -")
    expect(viaArgv.stdout + viaArgv.stderr).not.toContain("sk-from")
    expect(fake.recorded.secrets.ollamaApiKey).toBe(secrets)
    const help = await cli(["--help"])
    expect(help.stdout).toContain("settings set ollama.apiKey -")
    expect(help.stdout).not.toContain("fullAccessOrigins, ollama.apiKey")
  })

  it("routes ollama.apiKey to set_secret and never prints the secret (stdin)", async () => {
    const viaStdin = await cli(["settings", "set", "ollama.apiKey", "-", "--json"], "sk-from-stdin\n")
    expect(fake.recorded.secrets.ollamaApiKey).toBe("sk-from-stdin")
    for (const run of [viaStdin, await cli(["settings", "get"])]) {
      expect(run.stdout + run.stderr).not.toContain("sk-from")
    }
    const cleared = oneLine(await cli(["settings", "set", "ollama.apiKey", "null", "--json"]))
    expect(cleared.result).toMatchObject({ secretsSet: { ollamaApiKey: false } })
    expect(fake.recorded.secrets.ollamaApiKey).toBeNull()
  })

  it("refuses a wrong launch secret (UNAUTHORIZED, exit 3)", async () => {
    writeRuntime(fake.home, { ...fake.runtime, launchSecret: `${LAUNCH_SECRET}x` as typeof LAUNCH_SECRET })
    try {
      const run = await cli(["settings", "get", "--json"])
      expect(run.code).toBe(3)
      expect((oneLine(run).error as { code: string }).code).toBe("UNAUTHORIZED")
    } finally {
      writeRuntime(fake.home, fake.runtime)
    }
  })
})

describe("providers", () => {
  it("prints a table", async () => {
    const run = await cli(["providers"])
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^PROVIDER\s+NAME\s+STATUS\s+VERSION\s+NOTE$/)
    expect(lines[1]).toMatch(/^codex\s+Codex CLI\s+available\s+0\.171\.0$/)
    expect(lines[2]).toMatch(
      /^cursor\s+Cursor Agent\s+unavailable\s+-\s+cursor-agent was not found on PATH; experimental/
    )
    expect(fake.recorded.rescans.at(-1)).toBe(false)
  })

  it("--json prints the ProviderInfo list; --rescan asks Core to look again", async () => {
    const run = await cli(["providers", "--rescan", "--json"])
    expect(oneLine(run)).toEqual({ ok: true, result: PROVIDERS })
    expect(fake.recorded.rescans.at(-1)).toBe(true)
  })

  it("without Core: text on stderr, exit 3", async () => {
    const run = await runCli(["providers"], { env: { PEDELEC_HOME: "/nonexistent/pedelec-home" } })
    expect(run.code).toBe(3)
    expect(run.stdout).toBe("")
    expect(run.stderr).toContain("Pedelec is not running")
  })
})
