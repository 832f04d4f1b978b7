// A stand-in `pedelec-core`: a node script that, run with --detach, leaves a detached copy behind announcing itself
// in run/core.json as Core does (it listens on no socket, so connecting to it fails). Used by CoreAccess's tests and
// by the app's own when a Core it started must be gone after Quit.
import { chmod, writeFile } from "node:fs/promises"
import path from "node:path"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Wire"

const FAKE_CORE = `
const { spawn } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")
if (process.argv[2] === "--detach") {
  spawn(process.execPath, [__filename, "--serve"], { detached: true, stdio: "ignore", env: process.env }).unref()
} else {
  const run = path.join(process.env.PEDELEC_HOME, "run")
  fs.mkdirSync(run, { recursive: true })
  fs.writeFileSync(path.join(run, "core.json"), JSON.stringify({
    protocolVersion: ${PROTOCOL_VERSION}, coreVersion: "fake", pid: process.pid,
    socketPath: path.join(run, "core.sock"), launchSecret: "${"s".repeat(43)}", startedAt: Date.now()
  }))
  setTimeout(() => {}, 60_000)
}
`

/** Writes the stand-in into `dir` as an executable `pedelec-core.cjs`; its absolute path. */
export const writeFakeCore = async (dir: string): Promise<string> => {
  const command = path.join(dir, "pedelec-core.cjs")
  await writeFile(command, FAKE_CORE)
  await chmod(command, 0o755)
  return command
}
