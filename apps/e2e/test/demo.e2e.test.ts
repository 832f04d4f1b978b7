// The demo page (apps/demo/dist) driven as a user would: type into its chat, approve the page, allow the one
// destructive call (list.remove) in the extension's confirmation window, and let the scripted agent call the page's
// tools. Proves the demo's tools change what the page shows and that its chat
// streams the reply and shows errors with their message.

import { answerConfirm, approve, callShown, nextApprovalWindow, nextConfirmWindow } from "@pedelec/chain/Browser"
import { demoRoutes } from "@pedelec/chain/DemoPage"
import { chainForFile } from "@pedelec/chain/Harness"
import { script } from "@pedelec/providers/scripted/Script"
import { expect, test } from "vitest"

const chain = chainForFile({ routes: async () => demoRoutes(), https: false })

test("the agent changes the counter, the list and the canvas through the demo's tools", async () => {
  const page = await chain().context.newPage()
  await page.goto(`${chain().origins.http}/?extensionId=${chain().extensionId}`)
  await page.locator("#status").filter({ hasText: "ready" }).waitFor()
  await page
    .locator("#message")
    .fill(
      script(
        'call counter.increment {"by":2}',
        'call counter.set {"value":41}',
        "call counter.increment {}",
        'call list.add {"item":"milk"}',
        'call list.add {"item":"bread"}',
        'call list.remove {"item":"milk"}',
        'call shapes.add {"kind":"circle","x":50,"y":50,"size":20,"color":"tomato"}',
        'call shapes.add {"kind":"rect","x":100,"y":40,"size":30,"color":"not a colour"}',
        "say all done"
      )
    )
  const approval = nextApprovalWindow(chain().context, chain().extensionId)
  await page.locator("#send").click()
  const confirmation = nextConfirmWindow(chain().context, chain().extensionId, 30_000)
  await approve(await approval)
  const window = await confirmation
  await callShown(window)
  expect(await window.locator("#tool-name, #tool-title").allTextContents()).toContain("list.remove")
  await answerConfirm(window, "#allow-once")
  await page.locator(".bubble.assistant", { hasText: "all done" }).waitFor({ timeout: 30_000 })
  expect(await page.locator("#counter-value").textContent()).toBe("42")
  expect(await page.locator("#list-items li").allTextContents()).toEqual(["bread"])
  const transcript = (await page.locator("#transcript").textContent()) ?? ""
  expect(transcript).toContain('"shapes":1')
  // A colour the canvas cannot draw is the page's business rule: the agent hears it as TOOL_HANDLER_ERROR.
  expect(transcript).toMatch(/TOOL_HANDLER_ERROR.*BAD_COLOR/)
})

test("a failed turn shows its code and message", async () => {
  const page = chain()
    .context.pages()
    .find((open) => open.url().startsWith(chain().origins.http))!
  await page.locator("#message").fill(script("error PROVIDER_AUTH_REQUIRED please log in"))
  await page.locator("#send").click()
  await page.locator("#error").filter({ hasText: "PROVIDER_AUTH_REQUIRED" }).waitFor({ timeout: 15_000 })
})
