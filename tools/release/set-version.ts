/**
 * `npm run release:version -- <x.y.z>`: sets the release version in every workspace's package.json (the root's
 * included), the extension's source manifest and the lock's copies (Versions.ts), then checks every site and exits 1
 * naming what it could not set (a code literal, which should read its package.json). The code itself carries no
 * version of its own to rewrite. An optional second argument is the workspace root (for tests).
 */
import path from "node:path"
import { fileURLToPath } from "node:url"
import { mismatches, readSites, setVersion } from "./Versions.ts"

const [version, rootArg] = process.argv.slice(2)
const root = path.resolve(rootArg ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "../.."))

if (version === undefined) {
  process.stderr.write("Give the version to set: npm run release:version -- 0.2.0\n")
  process.exit(2)
}
const written = await setVersion(root, version).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(2)
})
console.log(`set ${version} in ${written.length} files:\n${written.map((file) => `  ${file}`).join("\n")}`)
const left = mismatches(await readSites(root))
if (left.length > 0) {
  const lines = left.map((site) => `  ${site.file}: ${site.version ?? "(no version)"}`).join("\n")
  process.stderr.write(
    `Still not ${version}; make each file that spells the version out read its package.json instead:\n${lines}\n`
  )
  process.exit(1)
}
