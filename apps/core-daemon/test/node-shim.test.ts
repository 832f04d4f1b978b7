// A Core that brings its own node (as under the desktop app, where it runs on Electron's runtime): with no node
// anywhere on the agents' PATH, the agent's `pedelec-cli` (a `#!/usr/bin/env node` script) still runs, through
// run/node-shim/node, which runs Core's own runtime. Without PEDELEC_PROVIDE_NODE the same turn cannot reach it.
import { readFile, stat } from "node:fs/promises"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { script } from "@pedelec/providers/scripted/Script"
import {
  chatOf,
  cliLineOf,
  coreForFile,
  hostClient,
  openSession,
  runTurnAnswering
} from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"

/** Nothing on it: the agent finds pedelec-cli only through Core's binDir, and node only through the shim. */
const NO_NODE_PATH = "/nonexistent-pedelec-path"

const skills = {
  guidance: "",
  tools: [{ name: "echo", description: "Echoes text.", argsSchema: { type: "object" as const } }]
}

const turnThroughCli = (core: ReturnType<typeof coreForFile>) =>
  Effect.gen(function* () {
    const client = yield* hostClient(core.info)
    const { sessionId, events } = yield* openSession(client, { skills })
    const completed = yield* runTurnAnswering(
      client,
      events,
      sessionId,
      script('call echo {"x":1}', "say done"),
      () => ({
        ok: true,
        result: "echoed"
      })
    )
    return { events, completed }
  }).pipe(Effect.scoped)

describe("a Core that provides node to its agents", () => {
  const core = coreForFile({ env: { PATH: NO_NODE_PATH, PEDELEC_PROVIDE_NODE: "1" } })
  it.live("writes run/node-shim/node for its own runtime, and pedelec-cli runs through it", () =>
    Effect.gen(function* () {
      const shim = path.join(core.home, "run", "node-shim", "node")
      const text = yield* Effect.promise(() => readFile(shim, "utf8"))
      assert.include(text, process.execPath)
      assert.strictEqual((yield* Effect.promise(() => stat(shim))).mode & 0o777, 0o700)
      const { events, completed } = yield* turnThroughCli(core)
      const line = cliLineOf(events, completed.turnId, "echo")
      assert.strictEqual(completed.reason, "completed")
      assert.strictEqual(line.exit, 0)
      assert.strictEqual(line.output.result, "echoed")
    })
  )
})

describe("a Core that does not", () => {
  const core = coreForFile({ env: { PATH: NO_NODE_PATH } })
  it.live("writes no shim, and the same agent cannot start pedelec-cli (the check above can fail)", () =>
    Effect.gen(function* () {
      const exists = yield* Effect.promise(() =>
        stat(path.join(core.home, "run", "node-shim")).then(
          () => true,
          () => false
        )
      )
      assert.isFalse(exists)
      const { events, completed } = yield* turnThroughCli(core)
      // `env` finds no node: the shell's 127, and no line from pedelec-cli at all.
      assert.include(chatOf(events, completed.turnId).join("\n"), "tool echo exit 127")
    })
  )
})
