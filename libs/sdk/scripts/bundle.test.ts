// The built SDK as pages get it (run after `build`; it lives in scripts/ because it reads dist/ with Node): no Node
// import anywhere in its graph, Effect only by module path, and the browser file self-contained. Bundlers resolve
// what these specifiers say, so checking them is enough.
import { readdir, readFile } from "node:fs/promises"
import path from "node:path"
import { describe, expect, it } from "vitest"

const dist = path.resolve(import.meta.dirname, "../dist")

/** Static imports and re-exports (at a statement start), dynamic `import()` and `require()`. */
const specifiersOf = (code: string): Array<string> => [
  ...[...code.matchAll(/(?:^|[;}\n])\s*(?:import|export)\b[^;"'`]*?(?:\bfrom\s*)?["']([^"']+)["']/g)].map((m) => m[1]!),
  ...[...code.matchAll(/\b(?:import|require)\s*\(\s*["'`]([^"'`]+)/g)].map((m) => m[1]!)
]

const files = async () => (await readdir(dist)).filter((file) => file.endsWith(".js"))

describe("the built SDK", () => {
  it("imports only its own chunks and Effect modules by path (never node:, effect/rpc or the effect barrel)", async () => {
    const imported = new Set<string>()
    for (const file of await files()) {
      if (file === "pedelec.browser.js") continue
      for (const specifier of specifiersOf(await readFile(path.join(dist, file), "utf8"))) imported.add(specifier)
    }
    expect(imported.size).toBeGreaterThan(0)
    for (const specifier of imported) {
      expect(specifier).toMatch(/^(\.\/chunk-[\w-]+\.js|effect\/(?!rpc)[A-Z]\w*)$/)
    }
  })

  it("ships one self-contained browser module with no import and no Node global", async () => {
    const code = await readFile(path.join(dist, "pedelec.browser.js"), "utf8")
    expect(specifiersOf(code)).toEqual([])
    // Effect's runtime probes `globalThis.process?.getBuiltinModule?.("node:async_hooks")`, undefined in a browser:
    // a guarded lookup, not an import. Anything else naming a Node module would be one.
    const nodeMentions = code.replaceAll('process?.getBuiltinModule?.("node:async_hooks")', "")
    expect(nodeMentions).not.toMatch(/\bnode:|\brequire\(|\bBuffer\.|\bprocess\.env/)
    expect(code).toMatch(/export\s*\{[^}]*\bPedelec\b/)
  })

  it("ships self-contained type declarations for both entries", async () => {
    const names = await readdir(dist)
    expect(names).toEqual(expect.arrayContaining(["index.d.ts", "effect.d.ts"]))
    const declarations = (
      await Promise.all(
        names.filter((name) => name.endsWith(".d.ts")).map((name) => readFile(path.join(dist, name), "utf8"))
      )
    ).join("\n")
    expect(declarations).toMatch(/declare class Pedelec\b/)
    expect(declarations).toMatch(/declare class PedelecError\b/)
    // Contracts' types are inlined: a page's install has no @pedelec/contracts to resolve them from.
    expect(specifiersOf(declarations).filter((specifier) => !/^(\.\/|effect\/)/.test(specifier))).toEqual([])
    // The hooks the client calls on its sessions are @internal: not part of what page authors see.
    expect(declarations).not.toMatch(/\bresubscribe\(|\breceive\(/)
  })
})
