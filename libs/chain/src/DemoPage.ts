/**
 * DemoPage — the routes that serve the built demo (apps/demo/dist: index.html and demo.js) for `npm start`.
 */
import { readFile } from "node:fs/promises"
import path from "node:path"
import { LAYOUT } from "./Layout.ts"
import type { Routes } from "./Servers.ts"

const file = (name: string) => () => readFile(path.join(LAYOUT.demoDir, name))

export const demoRoutes = (): Routes => ({
  "/": { type: "text/html; charset=utf-8", body: file("index.html") },
  "/demo.js": { type: "text/javascript", body: file("demo.js") },
  "/demo.js.map": { type: "application/json", body: file("demo.js.map") }
})
