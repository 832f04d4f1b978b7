/**
 * `pedelec-cli providers [--rescan]`: the agent CLIs Core found (code, name, availability, version, and why one is
 * unavailable), as a small table, or the `ProviderInfo` list with `--json`. `--rescan` asks Core to look again
 * (PATH and the usual install dirs) before answering.
 */
import type { ProviderInfo } from "@pedelec/contracts/Provider"
import * as Effect from "effect/Effect"
import { succeeded, text } from "../Output.ts"
import { UserCore } from "../ToCore.ts"

export const providers = Effect.fn("providers")(function* (rescan: boolean, json: boolean) {
  const core = yield* UserCore
  const list = yield* core.providers(rescan)
  return json ? succeeded(list) : text(table(list))
})

const note = (provider: ProviderInfo): string =>
  [
    provider.error,
    provider.experimental ? "experimental: not yet verified against the real CLI" : null,
    provider.effort.supported ? null : `no effort levels${provider.effort.note ? ` (${provider.effort.note})` : ""}`
  ]
    .filter((part): part is string => part !== null && part !== "")
    .join("; ")

export const table = (list: ReadonlyArray<ProviderInfo>): string => {
  if (list.length === 0) return "No providers found. Install an agent CLI (codex, claude, gemini, …), then rescan."
  const rows = [
    ["PROVIDER", "NAME", "STATUS", "VERSION", "NOTE"],
    ...list.map((p) => [p.code, p.name, p.available ? "available" : "unavailable", p.version ?? "-", note(p)])
  ]
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join("  ")
        .trimEnd()
    )
    .join("\n")
}
