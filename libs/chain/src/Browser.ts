/**
 * Browser — Chromium through playwright-core with a fresh profile: `/usr/bin/chromium` (or $CHROMIUM), the flags
 * measured in research/browser-e2e.md §2, the unpacked extension loaded with `--disable-extensions-except` +
 * `--load-extension` (Playwright's default `--disable-extensions` wins otherwise, P2), the https test host mapped to
 * 127.0.0.1. Plus what tests do to the extension from outside a page: click Approve in its approval window, revoke
 * an origin on its options page, and stop its service worker through CDP (Playwright keeps it alive, P1).
 */
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { HTTPS_HOST } from "./Certificate.ts"

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium"

/** What every headless Chromium of the suites runs with (the desktop app's renderer tests too). */
export const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

const FLAGS = [...CHROMIUM_FLAGS, `--host-resolver-rules=MAP ${HTTPS_HOST} 127.0.0.1`, "--ignore-certificate-errors"]

export interface LaunchOptions {
  readonly profileDir: string
  /** The unpacked extension; undefined launches Chromium without it. */
  readonly extensionDir: string | undefined
  readonly extensionId: string
  /** More unpacked extensions loaded beside it (the bench's echo relay); Chromium takes one comma-separated list. */
  readonly extraExtensionDirs?: ReadonlyArray<string>
  readonly headless: boolean
  /** More Chromium flags, e.g. `--enable-features=WebMCP`. */
  readonly extraFlags?: ReadonlyArray<string>
  /** Inherited by the native host the browser starts. */
  readonly env?: Readonly<Record<string, string>>
}

export const launchBrowser = async (options: LaunchOptions): Promise<BrowserContext> => {
  const dirs = [
    ...(options.extensionDir === undefined ? [] : [options.extensionDir]),
    ...(options.extraExtensionDirs ?? [])
  ]
  const extension =
    dirs.length === 0 ? [] : [`--disable-extensions-except=${dirs.join(",")}`, `--load-extension=${dirs.join(",")}`]
  const context = await chromium.launchPersistentContext(options.profileDir, {
    executablePath: CHROMIUM,
    headless: options.headless,
    args: [...FLAGS, ...(options.extraFlags ?? []), ...extension],
    env: { ...process.env, ...options.env } as Record<string, string>,
    viewport: null
  })
  if (options.extensionDir !== undefined) {
    const ours = (url: string) => url.startsWith(`chrome-extension://${options.extensionId}/`)
    if (!context.serviceWorkers().some((worker) => ours(worker.url()))) {
      await context
        .waitForEvent("serviceworker", { predicate: (worker) => ours(worker.url()), timeout: 15_000 })
        .catch(async (error: unknown) => {
          await context.close()
          throw new Error(`the extension's service worker did not start (is apps/extension/dist built?): ${error}`)
        })
    }
  }
  return context
}

export const extensionUrl = (extensionId: string, page: string) => `chrome-extension://${extensionId}/${page}`

/** Resolves with the next approval window the extension opens (its URL is `approval.html…`). */
export const nextApprovalWindow = (context: BrowserContext, extensionId: string, timeoutMs = 15_000) =>
  context.waitForEvent("page", {
    predicate: (page) => page.url().startsWith(extensionUrl(extensionId, "approval.html")),
    timeout: timeoutMs
  })

/**
 * Clicks a button of an extension window that closes itself once the worker has taken the answer: that can happen
 * before Playwright's click returns ("Target page, context or browser has been closed", seen once in CI on Allow
 * for this session). A window that closed so has had its answer; any other failure is the test's.
 */
const clickAnswer = async (window: Page, selector: string) => {
  try {
    await window.locator(selector).click({ timeout: 10_000 })
  } catch (error) {
    if (!window.isClosed()) await window.waitForEvent("close", { timeout: 1_000 }).catch(() => Promise.reject(error))
  }
}

/** The approval window's text, then a click on Approve (enabled after a short delay: the click waits for it). */
export const approve = async (window: Page): Promise<string> => {
  await window.waitForLoadState("domcontentloaded")
  const approveButton = window.locator("#approve")
  await approveButton.waitFor({ state: "visible" })
  const text = (await window.locator("body").textContent()) ?? ""
  await clickAnswer(window, "#approve")
  return text
}

/**
 * Runs `action` (which makes the extension ask for approval) while approving the window it opens; resolves with
 * the action's value and the window's text.
 */
export const approving = async <A>(
  context: BrowserContext,
  extensionId: string,
  action: () => Promise<A>
): Promise<{ readonly value: A; readonly shown: string }> => {
  const window = nextApprovalWindow(context, extensionId)
  // Observed here so that a window that never comes (the action failed first) is not an unhandled rejection.
  window.catch(() => undefined)
  const running = action()
  // If the action fails before any window opens, that failure is the one to report.
  const shown = await Promise.race([
    window.then(approve),
    running.then(() => Promise.reject(new Error("the action finished without asking for approval")))
  ])
  return { value: await running, shown }
}

/**
 * Runs `action`, approving every approval window the extension opens meanwhile (an origin approved earlier gets none;
 * a first session after an origin-only approval gets its manifest's), with the text each showed, in order. Listens
 * only while the action runs, so it never clicks a window meant for a later action.
 */
export const approvingEach = async <A>(
  context: BrowserContext,
  extensionId: string,
  action: () => Promise<A>
): Promise<{ readonly value: A; readonly shown: ReadonlyArray<string> }> => {
  const approvals: Array<Promise<string>> = []
  const onPage = (page: Page) => {
    if (page.url().startsWith(extensionUrl(extensionId, "approval.html"))) approvals.push(approve(page))
  }
  context.on("page", onPage)
  try {
    const value = await action()
    const shown = await Promise.allSettled(approvals)
    return { value, shown: shown.map((outcome) => (outcome.status === "fulfilled" ? outcome.value : "")) }
  } finally {
    context.off("page", onPage)
    await Promise.allSettled(approvals)
  }
}

/** `approvingEach`, for a caller that needs only the action's value. */
export const approvingIfAsked = async <A>(context: BrowserContext, extensionId: string, action: () => Promise<A>) =>
  (await approvingEach(context, extensionId, action)).value

/** Resolves with the next confirmation window the extension opens for a destructive tool call (`confirm.html…`). */
export const nextConfirmWindow = (context: BrowserContext, extensionId: string, timeoutMs = 15_000) =>
  context.waitForEvent("page", {
    predicate: (page) => page.url().startsWith(extensionUrl(extensionId, "confirm.html")),
    timeout: timeoutMs
  })

/**
 * Once a confirmation window shows its call: the window asks the extension for it after it loads, so its text is
 * empty at first (a test that read it at once saw ["", ""] in CI).
 */
export const callShown = async (window: Page) => {
  await window.waitForLoadState("domcontentloaded")
  await window.locator("#tool-title").filter({ hasText: /./ }).waitFor({ timeout: 10_000 })
}

/** Answers a confirmation window as the user would: once it shows the call and its buttons could be enabled. */
export const answerConfirm = async (window: Page, button: "#allow-once" | "#allow-session" | "#deny") => {
  await callShown(window)
  await window.locator("#tool-description").filter({ hasText: /./ }).waitFor({ timeout: 10_000 })
  await clickAnswer(window, `${button}:not([disabled])`)
}

/** Clicks Revoke for `origin` on the extension's options page, as the user would. */
export const revokeOrigin = async (context: BrowserContext, extensionId: string, origin: string) => {
  const options = await context.newPage()
  try {
    await options.goto(extensionUrl(extensionId, "options.html"))
    await options.locator(`button.revoke-origin[data-origin="${origin}"]`).click({ timeout: 10_000 })
    await options
      .locator(`button.revoke-origin[data-origin="${origin}"]`)
      .waitFor({ state: "detached", timeout: 10_000 })
  } finally {
    await options.close()
  }
}

/** Stops every service worker (ours is the only one) the way Chrome does when it idles one out. */
export const stopServiceWorkers = async (context: BrowserContext, page: Page) => {
  const cdp = await context.newCDPSession(page)
  try {
    await cdp.send("ServiceWorker.enable")
    await cdp.send("ServiceWorker.stopAllWorkers")
  } finally {
    await cdp.detach()
  }
}
