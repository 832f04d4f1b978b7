// Bundles the scripted test agent (src/scripted/agent.ts) into dist/scripted-agent.mjs, a single executable file.
// Used by `npm run build` and by the test setup, which rebuilds only when the bundle is older than its sources.
// The file is written under a temporary name and renamed, so a test running the agent never reads half a bundle.
import { readdirSync, renameSync, statSync, writeFileSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const sourceDir = path.join(root, "src", "scripted")
export const AGENT_BUNDLE = path.join(root, "dist", "scripted-agent.mjs")

const mtime = (file: string) => {
  try {
    return statSync(file).mtimeMs
  } catch {
    return -1
  }
}

/** True when the bundle is missing or older than any of the agent's sources (or this script). */
export const isStale = (): boolean => {
  const built = mtime(AGENT_BUNDLE)
  const sources = [...readdirSync(sourceDir).map((name) => path.join(sourceDir, name)), fileURLToPath(import.meta.url)]
  return built < 0 || sources.some((file) => mtime(file) > built)
}

export const buildScriptedAgent = async (): Promise<void> => {
  const result = await build({
    entryPoints: [path.join(sourceDir, "agent.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
    outfile: AGENT_BUNDLE,
    write: false,
    logLevel: "warning"
  })
  await mkdir(path.dirname(AGENT_BUNDLE), { recursive: true })
  for (const file of result.outputFiles) {
    const temporary = `${file.path}.${process.pid}.tmp`
    writeFileSync(temporary, file.contents, { mode: 0o755 })
    renameSync(temporary, file.path)
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildScriptedAgent()
  console.log(`built ${path.relative(root, AGENT_BUNDLE)}`)
}
