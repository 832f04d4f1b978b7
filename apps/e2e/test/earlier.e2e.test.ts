// A page written for the earlier SDK (@kaoruisaac/pedelec), with only its import changed
// (libs/chain/src/page/earlier.ts), on an origin nobody approved yet: its first calls, listProviders() and
// getSettings() at once, open one approval window (SPEC §4) and both wait on it; then a session with an inline tool
// the agent calls (its first session asks once more, showing the guidance and tools its agent will be told: issue
// 16), an asset by the earlier spelling of its path, and the end. Also what an unapproved origin still cannot do: a
// raw request that does not ask.

import { approvingEach } from "@pedelec/chain/Browser"
import { chainForFile } from "@pedelec/chain/Harness"
import { PEDELEC_EXTENSION_ID } from "@pedelec/contracts/Wire"
import { script } from "@pedelec/providers/scripted/Script"
import { describe, expect, test } from "vitest"

const chain = chainForFile()

interface RawRuntime {
  connect(
    extensionId: string,
    info: { readonly name: string }
  ): {
    readonly onMessage: { addListener(listener: (message: unknown) => void): void }
    postMessage(message: unknown): void
  }
}

describe("a page written for the earlier SDK", () => {
  test("runs after changing only its import: approval on listProviders, tools, assets, end", async () => {
    // The earlier SDK had no extensionId option: the suite's extension must be the published id.
    expect(chain().extensionId).toBe(PEDELEC_EXTENSION_ID)
    const page = await chain().openPage(chain().origins.http)
    const text = script('call add {"a":2,"b":40}', "say added")
    const { value: report, shown } = await approvingEach(chain().context, chain().extensionId, () =>
      page.evaluate((text) => window.e2e.earlier(text), text)
    )
    expect(shown).toHaveLength(2)
    expect(shown[0]).toContain(chain().origins.http)
    expect(shown[0]).toContain("agent CLIs")
    expect(shown[1]).toContain("Allow what this site's agent will be told?")
    expect(report.providers).toContain("scripted")
    // The chain's home names the scripted agent as the default.
    expect(report.defaultProvider).toBe("scripted")
    expect(report.calls).toEqual([{ tool: "add", toolRequestId: expect.any(String), same: true }])
    expect(report.sums).toEqual([42])
    expect(report.chats.at(-1)).toBe("added")
    expect(report.uploaded).toBe("note.txt")
    expect(report.assets).toEqual([{ name: "note.txt", path: "note.txt", sizeBytes: 19 }])
    expect(report.assetText).toBe("hello, earlier page")
    expect(report.errors).toEqual([])
    expect(report.ended).toBe(true)
    expect(report.statuses.at(-1)).toBe("ended")
  })

  test("an unapproved origin's raw request that does not ask the user is APPROVAL_REQUIRED", async () => {
    const stranger = await chain().openPage(chain().origins.localhost)
    const answer = await stranger.evaluate(
      (extensionId) =>
        new Promise<unknown>((resolve) => {
          // The page's own chrome.runtime, as any script on it could use it (this project has no chrome types).
          const { runtime } = (globalThis as unknown as { chrome: { runtime: RawRuntime } }).chrome
          const port = runtime.connect(extensionId, { name: "pedelec-sdk" })
          port.onMessage.addListener((message) => resolve(message))
          const params = { sessionId: "A".repeat(22), text: "hi" }
          port.postMessage({ kind: "request", id: "r1", method: "session.send_text", params })
        }),
      chain().extensionId
    )
    expect(answer).toMatchObject({ kind: "response", id: "r1", ok: false, error: { code: "APPROVAL_REQUIRED" } })
    await stranger.close()
  })
})
