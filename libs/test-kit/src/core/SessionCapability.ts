/**
 * SessionCapability — the `PEDELEC_SESSION_CAP` Core gave a session's agent, read from that agent's environment in
 * /proc (Linux) as any process of the same user could: what a suite or a bench needs to act as the agent itself
 * (`pedelec-cli mcp`, `tool-call`) while the session's real agent runs. It starts nothing and talks to no Core.
 */
import { readdir, readFile } from "node:fs/promises"
import { setTimeout as sleep } from "node:timers/promises"

const POLL_MS = 50

const environOf = async (pid: string): Promise<ReadonlyArray<string>> =>
  (await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "")).split("\0")

/** The capability of the first live process started for `sessionId` (its agent), once one is there. */
export const sessionCapability = async (sessionId: string, timeoutMs = 10_000): Promise<string> => {
  const marker = `PEDELEC_THREAD_ID=${sessionId}`
  const prefix = "PEDELEC_SESSION_CAP="
  for (let waited = 0; waited < timeoutMs; waited += POLL_MS) {
    for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
      const environ = await environOf(pid)
      const capability = environ.find((entry) => entry.startsWith(prefix))
      if (capability !== undefined && environ.includes(marker)) return capability.slice(prefix.length)
    }
    await sleep(POLL_MS)
  }
  throw new Error(`no process of session ${sessionId} appeared within ${timeoutMs} ms`)
}
