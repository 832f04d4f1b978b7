// A page that goes away: closing the tab ends its session once the disconnect lease runs out, and the agent
// process goes with it. Core runs with PEDELEC_LEASE_MS=2000 instead of the default 10 s, so the case measures the
// lease itself (not ended before it, ended soon after it) without spending 10 s of the suite on waiting.

import { chainForFile, createApproved, sessionState, waitUntil } from "@pedelec/chain/Harness"
import { script } from "@pedelec/providers/scripted/Script"
import { sessionProcesses } from "@pedelec/test-kit/core/Harness"
import { expect, test } from "vitest"

const LEASE_MS = 2_000

const chain = chainForFile({ core: { env: { PEDELEC_LEASE_MS: String(LEASE_MS) } } })

test("closing the tab ends the session after the lease and kills the provider process", async () => {
  const page = await chain().openPage(chain().origins.http)
  const { value: sessionId } = await createApproved(chain(), page)
  await page.evaluate(({ sessionId, text }) => window.e2e.startTurn(sessionId, text), {
    sessionId,
    text: script("say working", "sleep 60000", "say never")
  })
  const agents = await waitUntil(
    "the scripted agent's process",
    () => sessionProcesses(sessionId),
    (pids) => pids.length > 0
  )
  await page.close()
  const closedAt = Date.now()
  await waitUntil(
    "the session to end",
    () => sessionState(chain().home, sessionId),
    (state) => state === "ended"
  )
  const endedAfter = Date.now() - closedAt
  // Not before the lease (some slack for the disconnect reaching Core), and not long after it.
  expect(endedAfter).toBeGreaterThanOrEqual(LEASE_MS - 500)
  expect(endedAfter).toBeLessThan(LEASE_MS + 8_000)
  await waitUntil(
    "the agent to be gone",
    () => sessionProcesses(sessionId),
    (pids) => pids.length === 0,
    10_000
  )
  expect(agents.length).toBeGreaterThan(0)
})
