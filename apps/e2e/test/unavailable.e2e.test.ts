// What a page sees when part of the chain is missing: no native host registered for the profile
// (NATIVE_HOST_UNAVAILABLE, with the browser's own message) and no extension at all (EXTENSION_UNAVAILABLE).
// Each case needs its own Chromium, and neither needs a Core.

import { approvingIfAsked } from "@pedelec/chain/Browser"
import { chainForFile } from "@pedelec/chain/Harness"
import { describe, expect, test } from "vitest"

describe("no native host registered", () => {
  const chain = chainForFile({ core: false, registerHost: false, https: false })

  test("creating a session fails NATIVE_HOST_UNAVAILABLE with Chromium's reason", async () => {
    const page = await chain().openPage(chain().origins.http)
    // Whether the extension asks for approval before it finds the host missing is its choice; either way is fine.
    const failure = await approvingIfAsked(chain().context, chain().extensionId, () =>
      page.evaluate(
        (extensionId) => window.e2e.failure(window.e2e.client(extensionId).createSession()),
        chain().extensionId
      )
    )
    expect(failure?.code).toBe("NATIVE_HOST_UNAVAILABLE")
    expect(failure?.details).toMatchObject({ browserMessage: "Specified native messaging host not found." })
  })
})

describe("no extension loaded", () => {
  const chain = chainForFile({ core: false, loadExtension: false, https: false })

  test("every call fails EXTENSION_UNAVAILABLE and checkAvailability says why", async () => {
    const page = await chain().openPage(chain().origins.http)
    const outcome = await page.evaluate(async (extensionId) => {
      const client = window.e2e.client(extensionId)
      return {
        create: await window.e2e.failure(client.createSession()),
        providers: await window.e2e.failure(client.listProviders()),
        // An Error does not survive page.evaluate's serialization: its code is taken out here.
        availability: await client.checkAvailability().then(({ error, ...rest }) => ({ ...rest, code: error?.code }))
      }
    }, chain().extensionId)
    expect(outcome.create?.code).toBe("EXTENSION_UNAVAILABLE")
    expect(outcome.providers?.code).toBe("EXTENSION_UNAVAILABLE")
    expect(outcome.availability).toMatchObject({
      available: false,
      extension: { available: false },
      desktop: { available: false },
      code: "EXTENSION_UNAVAILABLE"
    })
  })
})
