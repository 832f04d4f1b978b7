/**
 * Harness — the suites' side of the chain: one Chain per test file (started before its cases, closed after them,
 * with the native host's log and Core's stderr printed when a case failed), the parsing of the lines it prints for
 * each `call`, and a session's record on disk. Waiting and /proc lookups are test-kit's (core/Harness).
 */
import { readFile } from "node:fs/promises"
import path from "node:path"
import { waitUntil as waitUntilIn } from "@pedelec/test-kit/core/Harness"
import type { Page } from "playwright-core"
import { afterAll, afterEach, beforeAll } from "vitest"
import { approving } from "./Browser.ts"
import { type Chain, type ChainOptions, startChain } from "./Chain.ts"
import type { Routes } from "./Servers.ts"
import { testPageRoutes } from "./TestPage.ts"

/** One chain for the file; its getters throw until beforeAll has started it. */
export const chainForFile = (
  options: Omit<ChainOptions, "routes"> & { readonly routes?: () => Promise<Routes> } = {}
): (() => Chain) => {
  let chain: Chain | undefined
  let failed = false
  beforeAll(async () => {
    chain = await startChain({ ...options, routes: await (options.routes ?? testPageRoutes)() })
  })
  afterEach((context) => {
    if (context.task.result?.state === "fail") failed = true
  })
  afterAll(async () => {
    if (chain === undefined) return
    if (failed) {
      process.stderr.write(`\n--- native host log ---\n${await chain.hostLog()}\n`)
      process.stderr.write(`--- pedelec-core stderr ---\n${chain.core?.stderr() ?? "(no Core)"}\n`)
    }
    await chain.close()
  })
  return () => {
    if (chain === undefined) throw new Error("the file's chain has not started")
    return chain
  }
}

/** Creates a session from `page` (default input: the probe's tools), approving the origin in the popup. */
export const createApproved = async (chain: Chain, page: Page) =>
  approving(chain.context, chain.extensionId, () =>
    page.evaluate(async (extensionId) => {
      const session = await window.e2e.client(extensionId).createSession({ skills: window.e2e.skills })
      window.e2e.keep(session)
      return session.sessionId
    }, chain.extensionId)
  )

/** The chat texts of one turn as the page's recorder saw them. */
export const chatsOf = (page: Page, sessionId: string, turnId: string) =>
  page.evaluate(
    ({ sessionId, turnId }) =>
      (window.e2e.records.get(sessionId) ?? [])
        .filter((seen) => seen.kind === "chat" && seen.turnId === turnId)
        .map((seen) => seen.text),
    { sessionId, turnId }
  )

export interface CliLine {
  readonly exit: number
  readonly output: {
    readonly ok: boolean
    readonly result?: unknown
    readonly resultFile?: string
    readonly bytes?: number
    readonly error?: { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> }
  }
}

/** The lines the scripted agent printed for `call <tool>`: "tool <tool> exit <code>: <pedelec-cli's line> (… ms)". */
export const cliLines = (chats: ReadonlyArray<string>, tool: string): Array<CliLine> =>
  chats
    .filter((text) => text.startsWith(`tool ${tool} exit `))
    .map((line) => {
      const colon = line.indexOf(": ")
      const raw = line.slice(colon + 2).replace(/ \(\d+(\.\d+)? ms\)$/, "")
      return {
        exit: Number(line.slice(`tool ${tool} exit `.length, colon)),
        output: JSON.parse(raw) as CliLine["output"]
      }
    })

/** test-kit's waitUntil with the chain's longer default: a hop through the browser is slower than Core alone. */
export const waitUntil = <A>(what: string, probe: () => Promise<A>, check: (value: A) => boolean, timeoutMs = 15_000) =>
  waitUntilIn(what, probe, check, timeoutMs)

/** The session's record as Core persists it (its `state` says whether it ended). */
export const sessionState = async (home: string, sessionId: string): Promise<string | undefined> => {
  try {
    const record = JSON.parse(await readFile(path.join(home, "sessions", `${sessionId}.json`), "utf8")) as {
      readonly state?: string
    }
    return record.state
  } catch {
    return undefined
  }
}
