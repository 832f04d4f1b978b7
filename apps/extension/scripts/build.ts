// The unpacked dev build: the extension in dist/, with source maps. Load it with --load-extension=apps/extension/dist
// (the e2e suites and `npm start` do). The store zip is package.ts's.
import path from "node:path"
import { bundleExtension, projectRoot } from "./bundle.ts"

const dist = path.join(projectRoot, "dist")
const version = await bundleExtension(dist, { sourcemap: true, minify: false })
console.log(`extension ${version} built in ${path.relative(process.cwd(), dist) || "."}`)
