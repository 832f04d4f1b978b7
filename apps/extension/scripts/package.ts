// `npm run package`: writes the Chrome Web Store zip to the workspace's dist/ and prints its path (from the
// workspace root) and size. What the
// zip holds is store-zip.ts's; this is the command around it.
import { mkdir } from "node:fs/promises"
import path from "node:path"
import { projectRoot } from "./bundle.ts"
import { writeStoreZip } from "./store-zip.ts"

const workspaceRoot = path.resolve(projectRoot, "../..")
const outDir = path.join(workspaceRoot, "dist")
await mkdir(outDir, { recursive: true })
const zip = await writeStoreZip(workspaceRoot, outDir)
const kib = (zip.bytes / 1024).toFixed(1)
console.log(`${path.relative(workspaceRoot, zip.file)}: ${kib} KiB (${zip.bytes} bytes, ${zip.entries.length} files)`)
