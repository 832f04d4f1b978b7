// Consent the page cannot forge (issue 16), in real Chromium with the built extension, native host and Core: the
// approval window shows what the agent will be told (the page's guidance and tool index), a later session with the
// same manifest is not asked again, one whose guidance or tools changed asks again showing what changed, and the
// options page shows each site's approved manifest. A destructive tool's call waits on the user's yes in a window
// the extension draws: allowed once, allowed for the session, denied (the agent gets TOOL_DENIED_BY_USER and the
// page's handler never runs), left open past the tool's timeout, and answered after a service-worker stop. A site's
// policy set in the options page refuses, by rule, a provider it does not allow (asked for: the extension; the
// default: Core), a workspace path, and a session over its limit; a policy the desktop app sets is the one the
// options page shows and the extension enforces.
// Screenshots of each window land in test/screenshots/.
import { mkdir } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import {
  answerConfirm,
  extensionUrl,
  nextApprovalWindow,
  nextConfirmWindow,
  stopServiceWorkers
} from "@pedelec/chain/Browser"
import { chainForFile, chatsOf, cliLines } from "@pedelec/chain/Harness"
import type { Origin } from "@pedelec/contracts/Ids"
import type { SitePolicy } from "@pedelec/contracts/SitePolicy"
import { connectDesktop } from "@pedelec/core-client/CoreClient"
import { script } from "@pedelec/providers/scripted/Script"
import { liveCore } from "@pedelec/test-kit/core/CoreProcess"
import * as Effect from "effect/Effect"
import type { Page } from "playwright-core"
import { describe, expect, test } from "vitest"

const chain = chainForFile()
const SCREENSHOTS = path.join(path.dirname(fileURLToPath(import.meta.url)), "screenshots")

const shoot = async (page: Page, name: string) => {
  await mkdir(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true })
}

/** The skills of the probe page, with changes: what a session of the test asks the agent to be told. */
type Change = { readonly guidance?: string; readonly extraTool?: boolean }

/** The page's createSession with the probe's skills changed as asked; its session id, or the failure's code. */
const createOn = (page: Page, change: Change, input: Record<string, unknown> = {}) =>
  page.evaluate(
    async ({ extensionId, change, input }) => {
      const base = window.e2e.skills
      const erase = {
        name: "erase",
        description: "Erases the whole draft.",
        argsSchema: { type: "object" as const },
        // Shorter than any person takes to read the window: it must not run out while the window is open.
        timeoutMs: 1000,
        annotations: { destructive: true, title: "Erase draft" }
      }
      const tools = change.extraTool ? [...base.tools, erase] : base.tools
      const skills = { guidance: change.guidance ?? base.guidance, tools }
      const created = window.e2e.client(extensionId).createSession({ ...input, skills } as never)
      const failure = await window.e2e.failure(created)
      if (failure !== undefined) return { failure }
      const session = await created
      window.e2e.keep(session)
      return { sessionId: session.sessionId }
    },
    { extensionId: chain().extensionId, change, input }
  )

/** Starts a createSession with the probe's skills (changed as asked) on `page`; resolves with its session id. */
const create = async (page: Page, change: Change = {}) => {
  const outcome = await createOn(page, change)
  if (outcome.sessionId === undefined) throw new Error(`createSession failed: ${JSON.stringify(outcome.failure)}`)
  return outcome.sessionId
}

/** The window's manifest once drawn (it reads it from the extension after load). */
const drawnManifest = async (window: Page) => {
  await window.waitForLoadState("domcontentloaded")
  await window.locator("#manifest .tools li[data-tool]").first().waitFor({ timeout: 10_000 })
  return {
    title: await window.locator("#title").textContent(),
    guidance: await window.locator("#manifest .guidance").textContent(),
    tools: await window
      .locator("#manifest .tools li[data-tool]")
      .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.tool))
  }
}

const approveShown = async (window: Page) => {
  const approve = window.locator("#approve")
  await expect.poll(() => approve.isEnabled(), { timeout: 10_000 }).toBe(true)
  await approve.click()
}

/** Runs `calls` erase calls in one turn with a handler that counts its runs; resolves with what the agent saw. */
const eraseTurn = (page: Page, sessionId: string, calls: number) =>
  page
    .evaluate(
      async ({ sessionId, text }) => {
        const session = window.e2e.session(sessionId)
        let ran = 0
        const off = session.onTool("erase", () => {
          ran++
          return { erased: true }
        })
        try {
          const result = await session.sendText(text, { timeoutMs: 120_000 })
          return { ran, turnId: result.turnId }
        } finally {
          off()
        }
      },
      { sessionId, text: script(...Array.from({ length: calls }, () => 'call erase {"what":"the draft"}'), "say done") }
    )
    .then(async ({ ran, turnId }) => ({ ran, lines: cliLines(await chatsOf(page, sessionId, turnId), "erase") }))

const nextConfirm = () => nextConfirmWindow(chain().context, chain().extensionId)

/** Answers once the window shows the call's arguments. */
const answerWindow = async (window: Page, button: "#allow-once" | "#allow-session" | "#deny") => {
  await window.locator('#args dd[data-arg="what"]').waitFor({ timeout: 10_000 })
  await answerConfirm(window, button)
}

const ERASE_MANIFEST: Change = { guidance: "Tools of the Pedelec E2E test page. Erase when asked.", extraTool: true }
let page: Page
let eraseSession: string
const pageOf = () => page
const sessionOf = () => eraseSession

describe("what the agent will be told is approved with the site", () => {
  test("the first session's window shows the guidance and every tool the agent gets", async () => {
    page = await chain().openPage(chain().origins.http)
    const shown = nextApprovalWindow(chain().context, chain().extensionId)
    const created = create(page)
    const window = await shown
    const manifest = await drawnManifest(window)
    expect(manifest.title).toBe("Allow this site to use Pedelec?")
    expect(manifest.guidance).toBe("Tools of the Pedelec E2E test page.")
    expect(manifest.tools).toEqual(expect.arrayContaining(["add", "echo", "wait", "fail", "orphan", "blob"]))
    await shoot(window, "approval-manifest")
    await approveShown(window)
    expect(await created).toMatch(/^[A-Za-z0-9_-]{22,}$/)
  })

  test("the same manifest again is not asked", async () => {
    let asked = false
    const onPage = (opened: Page) => {
      if (opened.url().startsWith(extensionUrl(chain().extensionId, "approval.html"))) asked = true
    }
    chain().context.on("page", onPage)
    try {
      expect(await create(page)).toMatch(/^[A-Za-z0-9_-]{22,}$/)
    } finally {
      chain().context.off("page", onPage)
    }
    expect(asked).toBe(false)
  })

  test("a changed guidance and a new destructive tool ask again, saying what changed", async () => {
    const shown = nextApprovalWindow(chain().context, chain().extensionId)
    const created = create(page, ERASE_MANIFEST)
    const window = await shown
    const manifest = await drawnManifest(window)
    expect(manifest.title).toBe("This site changed what its agent will be told")
    const change = await window.locator(".manifest-change").textContent()
    expect(change).toContain("The guidance (below) is different.")
    expect(change).toContain("New tools: erase.")
    const erase = window.locator('#manifest .tools li[data-tool="erase"]')
    expect(await erase.locator(".badge.destructive").textContent()).toBe("can change or delete your data")
    expect(await erase.locator(".badge.changed").textContent()).toBe("new")
    await shoot(window, "approval-manifest-changed")
    await approveShown(window)
    eraseSession = await created
    expect(eraseSession).toMatch(/^[A-Za-z0-9_-]{22,}$/)
  })

  test("the options page shows the site's approved manifest", async () => {
    const options = await chain().context.newPage()
    await options.goto(extensionUrl(chain().extensionId, "options.html"))
    const site = options.locator(`#origins li[data-origin="${chain().origins.http}"]`)
    const details = site.locator("details.manifest-details")
    await details.locator("summary").click({ timeout: 10_000 })
    const tools = await details
      .locator(".tools li[data-tool]")
      .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.tool))
    expect(tools).toContain("erase")
    expect(await details.locator(".guidance").textContent()).toContain("Erase when asked.")
    await shoot(options, "options-manifest")
    await options.close()
  })
})

describe("a destructive tool's call waits on the user's yes, in a window the page cannot draw", () => {
  test("allowed once: the window shows the site, the tool and its arguments; the handler runs only after Allow", async () => {
    const shown = nextConfirm()
    const turn = eraseTurn(pageOf(), sessionOf(), 1)
    const window = await shown
    await window.locator('#args dd[data-arg="what"]').waitFor({ timeout: 10_000 })
    expect(await window.locator("#site").textContent()).toBe(chain().origins.http)
    expect(await window.locator("#tool-name").textContent()).toBe("erase")
    expect(await window.locator('#args dd[data-arg="what"]').textContent()).toBe("the draft")
    await shoot(window, "confirm-window")
    await answerWindow(window, "#allow-once")
    const { ran, lines } = await turn
    expect(ran).toBe(1)
    expect(lines).toEqual([{ exit: 0, output: { ok: true, result: { erased: true } } }])
  })

  test("denied: the agent is told TOOL_DENIED_BY_USER and the page's handler never runs", async () => {
    const shown = nextConfirm()
    const turn = eraseTurn(pageOf(), sessionOf(), 1)
    await answerWindow(await shown, "#deny")
    const { ran, lines } = await turn
    expect(ran).toBe(0)
    expect(lines.map((line) => [line.exit, line.output.error?.code])).toEqual([[1, "TOOL_DENIED_BY_USER"]])
    expect(lines[0]?.output.error?.message).toContain("Do not retry the same call")
  })

  test("left open past the tool's 1 s timeout, the call still runs when allowed", async () => {
    const shown = nextConfirm()
    const turn = eraseTurn(pageOf(), sessionOf(), 1)
    const window = await shown
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    await answerWindow(window, "#allow-once")
    const { ran, lines } = await turn
    expect(ran).toBe(1)
    expect(lines.map((line) => line.exit)).toEqual([0])
  })

  test("the window survives a service-worker stop and its answer still counts", async () => {
    const shown = nextConfirm()
    const turn = eraseTurn(pageOf(), sessionOf(), 1)
    const window = await shown
    await window.locator('#args dd[data-arg="what"]').waitFor({ timeout: 10_000 })
    await stopServiceWorkers(chain().context, pageOf())
    await answerWindow(window, "#allow-once")
    const { ran, lines } = await turn
    expect(ran).toBe(1)
    expect(lines.map((line) => line.exit)).toEqual([0])
  })

  test("allowed for the session: the next calls of that tool run without asking", async () => {
    let windows = 0
    const count = (opened: Page) => {
      if (opened.url().startsWith(extensionUrl(chain().extensionId, "confirm.html"))) windows++
    }
    const shown = nextConfirm()
    chain().context.on("page", count)
    try {
      const turn = eraseTurn(pageOf(), sessionOf(), 3)
      await answerWindow(await shown, "#allow-session")
      const { ran, lines } = await turn
      expect(ran).toBe(3)
      expect(lines.map((line) => line.exit)).toEqual([0, 0, 0])
    } finally {
      chain().context.off("page", count)
    }
    expect(windows).toBe(1)
  })
})

/** Sets the http site's policy through the options page's form, as the user does. */
const setPolicy = async (policy: {
  readonly only?: ReadonlyArray<string>
  readonly paths: boolean
  readonly max?: number
}) => {
  const options = await chain().context.newPage()
  try {
    await options.goto(extensionUrl(chain().extensionId, "options.html"))
    const form = options.locator(`form.policy[data-origin="${chain().origins.http}"]`)
    await options.locator(`#origins li[data-origin="${chain().origins.http}"] details.policy-details summary`).click()
    await form.locator("input[name=any-provider]").setChecked(policy.only === undefined)
    for (const box of await form.locator("input[name=provider]").all()) {
      if (policy.only !== undefined) await box.setChecked(policy.only.includes(await box.inputValue()))
    }
    await form.locator("input[name=paths]").setChecked(policy.paths)
    await form.locator("input[name=max-sessions]").fill(policy.max === undefined ? "" : String(policy.max))
    if (policy.only !== undefined) await shoot(options, "options-policy")
    await form.locator("button.save-policy").click()
    await expect.poll(() => options.locator("#status").textContent(), { timeout: 10_000 }).toContain("Saved the policy")
  } finally {
    await options.close()
  }
}

/** A create on the approved manifest (so nothing is asked), refused: the failure. */
const createFailure = async (input: Record<string, unknown>) =>
  (await createOn(pageOf(), ERASE_MANIFEST, input)).failure

describe("a site's policy, set in the options page, refuses by rule", () => {
  test("a provider it does not allow, asked for or the default, and a workspace path", async () => {
    await setPolicy({ only: ["ollama"], paths: false })
    expect((await createFailure({ provider: "codex" }))?.code).toBe("POLICY_PROVIDER_NOT_ALLOWED")
    // No provider named: Core's copy refuses the default provider (scripted here).
    const byCore = await createFailure({})
    expect(byCore?.code).toBe("POLICY_PROVIDER_NOT_ALLOWED")
    expect((await createFailure({ provider: "ollama", workspace: { path: "/tmp" } }))?.code).toBe(
      "POLICY_WORKSPACE_NOT_ALLOWED"
    )
  })

  test("one the desktop app set holds, loosened or tightened, and the options page shows it", async () => {
    const origin = chain().origins.http as Origin
    const fromDesktop = async (policy: SitePolicy) => {
      const info = await liveCore(chain().home)
      if (info === undefined) throw new Error("no Core runs for the chain's home")
      await Effect.runPromise(
        Effect.scoped(
          Effect.flatMap(connectDesktop(info, { component: "desktop", version: "e2e" }), (desktop) =>
            desktop["desktop.origin.set_policy"]({ origin, policy })
          )
        )
      )
    }
    await setPolicy({ only: ["ollama"], paths: true })
    try {
      // Loosened in the desktop app: the extension's copy would refuse, Core's allows, so the session starts.
      await fromDesktop({ allowWorkspacePaths: true })
      const loosened = await createOn(pageOf(), ERASE_MANIFEST, { provider: "scripted" })
      expect(loosened.failure).toBeUndefined()
      // Tightened there: refused (by Core, whose copy it is), and the options page shows it.
      await fromDesktop({ allowedProviders: ["ollama"], allowWorkspacePaths: true })
      const tightened = await createFailure({ provider: "scripted" })
      expect(tightened?.code).toBe("POLICY_PROVIDER_NOT_ALLOWED")
      expect(tightened?.source).toBe("core")
      const options = await chain().context.newPage()
      try {
        await options.goto(extensionUrl(chain().extensionId, "options.html"))
        const summary = options.locator(`#origins li[data-origin="${origin}"] details.policy-details summary`)
        await expect.poll(() => summary.textContent(), { timeout: 10_000 }).toContain("Only ollama")
      } finally {
        await options.close()
      }
    } finally {
      await fromDesktop({ allowWorkspacePaths: true })
    }
  })

  test("a session over its live-session limit", async () => {
    await setPolicy({ paths: true, max: 1 })
    const failure = await createFailure({})
    expect(failure?.code).toBe("POLICY_SESSION_LIMIT")
    expect(failure?.message).toContain("limit is 1")
    await setPolicy({ paths: true })
  })
})
