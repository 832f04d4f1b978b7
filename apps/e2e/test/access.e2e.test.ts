// Who may do what: an unapproved origin is asked before anything (its status says so without waking the app),
// another origin cannot touch a session, an explicit workspace path is a grant of its own, and revoking an origin
// on the options page ends its sessions at once.
import { readdir } from "node:fs/promises"
import { approving, nextApprovalWindow, revokeOrigin } from "@pedelec/chain/Browser"
import { chainForFile, createApproved, waitUntil } from "@pedelec/chain/Harness"
import { removeDir, tempDir } from "@pedelec/chain/Temp"
import type { Page } from "playwright-core"
import { describe, expect, onTestFinished, test } from "vitest"

const chain = chainForFile()

describe("origins and grants", () => {
  let owner: Page
  let sessionId: string

  test("an unapproved origin's status and availability say so, and never wake the desktop app", async () => {
    // http://localhost:<port> is the same server as 127.0.0.1 but another origin, and nobody approves it here.
    // (listProviders and getSettings ask the user like createSession: earlier.e2e.test.ts.)
    const stranger = await chain().openPage(chain().origins.localhost)
    const outcome = await stranger.evaluate(async (extensionId) => {
      const client = window.e2e.client(extensionId)
      return { status: await client.getApprovalStatus(), availability: await client.checkAvailability() }
    }, chain().extensionId)
    expect(outcome.status).toMatchObject({ installed: true, approved: false, appConnected: false })
    expect(outcome.availability).toMatchObject({
      extension: { available: true },
      approval: { approved: false },
      desktop: { available: false, launchAttempted: false }
    })
    await stranger.close()
  })

  test("resumeSession from an unapproved origin asks the user too, and closing the window refuses it", async () => {
    const stranger = await chain().openPage(chain().origins.localhost)
    const approvalWindow = nextApprovalWindow(chain().context, chain().extensionId)
    const resumed = stranger.evaluate(
      (extensionId) => window.e2e.failure(window.e2e.client(extensionId).resumeSession("A".repeat(22))),
      chain().extensionId
    )
    const shown = await approvalWindow
    await shown.waitForLoadState("domcontentloaded")
    expect(await shown.locator("body").textContent()).toContain(chain().origins.localhost)
    await shown.close()
    expect((await resumed)?.code).toBe("APPROVAL_REJECTED")
    await stranger.close()
  })

  test("setup: the http origin owns a session", async () => {
    owner = await chain().openPage(chain().origins.http)
    sessionId = (await createApproved(chain(), owner)).value
  })

  test("another origin, even approved, gets SESSION_ACCESS_DENIED for that session", async () => {
    const other = await chain().openPage(chain().origins.https!)
    // Approving https://pedelec-e2e.test:<port> through its own first session, then reaching for the http one's.
    await createApproved(chain(), other)
    const failure = await other.evaluate(
      ({ extensionId, sessionId }) =>
        window.e2e.failure(window.e2e.client(extensionId).resumeSession(sessionId, { claimTools: true })),
      { extensionId: chain().extensionId, sessionId }
    )
    expect(failure?.code).toBe("SESSION_ACCESS_DENIED")
    await other.close()
  })

  test("an explicit workspace path needs its own grant, and the approval window shows the path", async () => {
    const workspace = await tempDir("project")
    onTestFinished(() => removeDir(workspace))
    const { value, shown } = await approving(chain().context, chain().extensionId, () =>
      owner.evaluate(
        async ({ extensionId, workspace }) => {
          const session = await window.e2e.client(extensionId).createSession({ workspace: { path: workspace } })
          const workspaceSeen = session.workspace
          await session.end()
          return workspaceSeen
        },
        { extensionId: chain().extensionId, workspace }
      )
    )
    expect(shown).toContain(workspace)
    expect(value).toMatchObject({ path: workspace, managed: false })
    expect(await readdir(workspace)).toEqual([".pedelec-runtime"])
  })

  test("revoking the origin on the options page ends its sessions at once", async () => {
    await owner.evaluate((sessionId) => {
      const session = window.e2e.session(sessionId)
      session.onEnded(() => {
        document.body.dataset.ended = sessionId
      })
    }, sessionId)
    await revokeOrigin(chain().context, chain().extensionId, chain().origins.http)
    await waitUntil(
      "onEnded after the revocation",
      () => owner.evaluate(() => document.body.dataset.ended ?? ""),
      (ended) => ended === sessionId,
      10_000
    )
    const after = await owner.evaluate(
      (extensionId) => window.e2e.client(extensionId).getApprovalStatus(),
      chain().extensionId
    )
    expect(after).toMatchObject({ approved: false })
  })
})
