/**
 * PedelecMcp: which pedelec-cli an agent CLI is told to start as its `pedelec` MCP server — the first executable one
 * on the session's PATH (Core's bin folder comes first), none without one — and that the server's arguments never
 * carry the capability. The adapters' use of it is in their own tests; the real server in apps/cli/test/mcp.test.ts.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { PEDELEC_MCP_ENV_VARS, pedelecMcpServer } from "../src/PedelecMcp.ts"
import { tempDir } from "./support.ts"

const script = (dir: string, mode: number) => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, "pedelec-cli"), "#!/bin/sh\n")
  chmodSync(path.join(dir, "pedelec-cli"), mode)
  return path.join(dir, "pedelec-cli")
}

describe("PedelecMcp", () => {
  it.live("the first executable pedelec-cli on PATH, by its absolute path, with `mcp`", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("mcp-path")
      const ours = script(path.join(root, "bin"), 0o755)
      script(path.join(root, "later"), 0o755)
      const PATH = [path.join(root, "empty"), path.join(root, "bin"), path.join(root, "later")].join(path.delimiter)
      assert.deepStrictEqual(pedelecMcpServer({ PATH }), { command: ours, args: ["mcp"] })
    })
  )

  it.live("skips one that is not executable and relative PATH entries; none found is undefined", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("mcp-none")
      script(path.join(root, "plain"), 0o644)
      assert.isUndefined(pedelecMcpServer({ PATH: [path.join(root, "plain"), "bin", "."].join(path.delimiter) }))
      assert.isUndefined(pedelecMcpServer({}))
    })
  )

  it("the session and its capability reach the server by name, from the environment", () => {
    assert.includeMembers([...PEDELEC_MCP_ENV_VARS], ["PEDELEC_THREAD_ID", "PEDELEC_SESSION_CAP", "PEDELEC_HOME"])
  })
})
