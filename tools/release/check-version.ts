/**
 * `npm run check:version` (part of `npm test`, before the Nx run): fails, naming each file and the version it has,
 * when any version site (Versions.ts) differs from the root package.json's. An optional argument is the workspace
 * root (the tests point it at a temp copy). It changes nothing; set-version.ts does.
 */
import path from "node:path"
import { fileURLToPath } from "node:url"
import { mismatches, readSites, type VersionSite } from "./Versions.ts"

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "../.."))

/** What the check prints when a site differs: each file and its version, then what to do about each kind. */
const describeMismatch = (sites: ReadonlyArray<VersionSite>, wrong: ReadonlyArray<VersionSite>): string => {
  const release = sites[0]?.version ?? "(none)"
  const lines = wrong.map(
    (site) => `  ${site.file}: ${site.kind === "literal" ? `spells ${release} out` : (site.version ?? "(no version)")}`
  )
  const todo: Array<string> = []
  if (wrong.some((site) => site.kind !== "literal"))
    todo.push(`Run \`npm run release:version -- ${release}\` to set it in every package.json and the manifest.`)
  if (wrong.some((site) => site.kind === "literal"))
    todo.push(
      'Make each of those files read its package.json (`import packageJson from "<path>/package.json" with { type: "json" }`, as libs/core/src/CoreConfig.ts does) instead of spelling the version out.'
    )
  return `The release version is ${release} (package.json), but these differ:\n${lines.join("\n")}\n${todo.join("\n")}\n`
}

const sites = await readSites(root)
const wrong = mismatches(sites)
if (wrong.length > 0) {
  process.stderr.write(describeMismatch(sites, wrong))
  process.exit(1)
}
console.log(`versions OK: ${sites[0]?.version} in ${sites.length} files`)
