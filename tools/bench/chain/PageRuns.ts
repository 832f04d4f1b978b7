/**
 * PageRuns — the Node side of the chain scenario's page: the routes that serve libs/chain's test page with the bench's
 * page module beside it, the session the page opens (approved through the popup), the calls into bench-page that
 * time echoes and turns inside the page, and Core's own publish times from a session's log to set arrivals against.
 * It does not decide what is measured or print anything (Chain does).
 */
import { readFile } from "node:fs/promises"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { approving } from "@pedelec/chain/Browser"
import type { Chain } from "@pedelec/chain/Chain"
import { testPageRoutes } from "@pedelec/chain/TestPage"
import { build } from "esbuild"
import type { Page } from "playwright-core"
import type { Arrival, BurstRun, EchoRun, TurnRun } from "./bench-page.ts"

const benchPageEntry = path.join(path.dirname(fileURLToPath(import.meta.url)), "bench-page.ts")

/** The test page plus the bench's page module, bundled once (the probe and the SDK bundle come from TestPage). */
export const benchRoutes = async () => {
  const bundled = await build({
    entryPoints: [benchPageEntry],
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    write: false,
    logLevel: "silent"
  })
  const code = bundled.outputFiles[0]!.text
  return { ...(await testPageRoutes()), "/bench.js": { type: "text/javascript", body: async () => code } }
}

/** The events Core published for a session, by seq, from its durable log (`at` is Core's Date.now()). */
export const coreEvents = async (home: string, sessionId: string) => {
  const file = path.join(home, "logs", `${sessionId}.jsonl`)
  const events = new Map<number, { readonly type: string; readonly at: number }>()
  for (const line of (await readFile(file, "utf8")).split("\n")) {
    if (line === "") continue
    const event = JSON.parse(line) as { readonly seq: number; readonly type: string; readonly at: number }
    events.set(event.seq, { type: event.type, at: event.at })
  }
  return events
}

/** Core publish → page receipt for each arrival, in ms (1 ms resolution: both sides read Date.now()). */
export const publishToPage = async (home: string, sessionId: string, arrivals: ReadonlyArray<Arrival>) => {
  const events = await coreEvents(home, sessionId)
  return arrivals.map(([seq, wall]) => {
    const event = events.get(seq)
    if (event === undefined) throw new Error(`Core's log has no event ${seq} for ${sessionId}`)
    return wall - event.at
  })
}

/** A tab on the test page with the bench module loaded, and a session it created (approved as a user would). */
export const openBenchPage = async (chain: Chain): Promise<{ readonly page: Page; readonly sessionId: string }> => {
  const page = await chain.openPage(chain.origins.http)
  await page.addScriptTag({ url: "/bench.js", type: "module" })
  await page.waitForFunction(() => window.bench !== undefined, undefined, { timeout: 15_000 })
  const { value: sessionId } = await approving(chain.context, chain.extensionId, () =>
    page.evaluate(async (extensionId) => {
      const session = await window.e2e.client(extensionId).createSession({ skills: window.e2e.skills })
      window.e2e.keep(session)
      return session.sessionId
    }, chain.extensionId)
  )
  return { page, sessionId }
}

/** Until the service worker of `extensionId` runs (the echo relay must be up before the page connects to it). */
export const waitForWorker = async (chain: Chain, extensionId: string) => {
  const ours = (url: string) => url.startsWith(`chrome-extension://${extensionId}/`)
  if (chain.context.serviceWorkers().some((worker) => ours(worker.url()))) return
  await chain.context.waitForEvent("serviceworker", { predicate: (worker) => ours(worker.url()), timeout: 15_000 })
}

export const turn = async (page: Page, sessionId: string, text: string): Promise<TurnRun> => {
  const run = await page.evaluate(({ sessionId, text }) => window.bench.turn(sessionId, text), { sessionId, text })
  if (run.reason !== "completed") throw new Error(`a bench turn ended ${run.reason}`)
  return run
}

export const burst = (page: Page, n: number, chars: number, char = "x"): Promise<BurstRun> =>
  page.evaluate(({ n, chars, char }) => window.bench.echoBurst(n, chars, char), { n, chars, char })

export const pipelined = (page: Page, n: number, chars: number): Promise<EchoRun> =>
  page.evaluate(({ n, chars }) => window.bench.echoPipelined(n, chars), { n, chars })

export const roundTrips = (page: Page, n: number, chars: number): Promise<Array<number>> =>
  page.evaluate(({ n, chars }) => window.bench.echoRoundTrips(n, chars), { n, chars })
