/**
 * BrowserTurns — the page's and the processes' side of the browser-chain SIGKILL probes: a session created and a
 * turn started from the e2e test page (the real SDK), its tool handler counting every call it runs; what the page
 * recorded against Core's log of the same session (projected onto what the SDK surfaces); and the processes a kill
 * targets or may leave behind, read from /proc: the native hosts serving one Pedelec home and the extension's
 * renderer. It knows nothing of when or what to kill; browser-kills.test.ts decides that.
 */
import { readdir, readFile } from "node:fs/promises"
import { approvingIfAsked } from "@pedelec/chain/Browser"
import type { Chain } from "@pedelec/chain/Chain"
import { LAYOUT } from "@pedelec/chain/Layout"
import type { Seen, TurnOutcome } from "@pedelec/chain/page/probe"
import type { SessionEvent } from "@pedelec/contracts/Events"
import type { Origin, SessionId } from "@pedelec/contracts/Ids"
import { liveCore } from "@pedelec/test-kit/core/CoreProcess"
import { collectEvents, hostClient } from "@pedelec/test-kit/core/Harness"
import * as Effect from "effect/Effect"
import type { Page } from "playwright-core"

/** What the page's handler of `add` counted, per tool call id, kept on `window` across evaluations. */
interface Counted {
  faultCalls: Record<string, number>
}

/** A new session from the page (approving the origin the first time), its `add` answered after `answerMs`. */
export const openPageSession = async (chain: Chain, page: Page, answerMs: number): Promise<string> =>
  approvingIfAsked(chain.context, chain.extensionId, () =>
    page.evaluate(
      async ({ extensionId, answerMs }) => {
        const session = await window.e2e.client(extensionId).createSession({ skills: window.e2e.skills })
        window.e2e.keep(session)
        const counted = window as unknown as Counted
        counted.faultCalls ??= {}
        session.onTool<{ readonly a: number; readonly b: number }>("add", async (args, ctx) => {
          counted.faultCalls[ctx.toolCallId] = (counted.faultCalls[ctx.toolCallId] ?? 0) + 1
          await new Promise((resolve) => setTimeout(resolve, answerMs))
          return { sum: args.a + args.b }
        })
        return session.sessionId
      },
      { extensionId: chain.extensionId, answerMs }
    )
  )

/** Starts `text` as a turn and resolves once Core accepted it (the page saw an event of the turn). */
export const startAcceptedTurn = async (page: Page, sessionId: string, text: string): Promise<void> => {
  await page.evaluate(({ sessionId, text }) => window.e2e.startTurn(sessionId, text), { sessionId, text })
  await page.waitForFunction(
    (sessionId) => (window.e2e.records.get(sessionId) ?? []).some((seen) => seen.turnId !== undefined),
    sessionId,
    { timeout: 15_000, polling: 10 }
  )
}

/** Whether the page has seen a completion of a turn of this session. */
export const turnCompletedYet = (page: Page, sessionId: string): Promise<boolean> =>
  page.evaluate(
    (sessionId) => (window.e2e.records.get(sessionId) ?? []).some((seen) => seen.kind === "turn"),
    sessionId
  )

export interface PageView {
  /** How `sendText` ended, or `undefined` when it had not within the wait. */
  readonly outcome: TurnOutcome | undefined
  readonly seen: ReadonlyArray<Seen>
  /** Runs of the page's handler per tool call id. */
  readonly calls: Readonly<Record<string, number>>
}

/** Waits (bounded) for the turn's `sendText` to settle, then reads what the page recorded. */
export const pageView = (page: Page, sessionId: string, waitMs: number): Promise<PageView> =>
  page.evaluate(
    async ({ sessionId, waitMs }) => {
      const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), waitMs))
      const outcome = await Promise.race([window.e2e.turn(sessionId), timeout])
      const calls = { ...((window as unknown as Counted).faultCalls ?? {}) }
      return { outcome, seen: [...(window.e2e.records.get(sessionId) ?? [])], calls }
    },
    { sessionId, waitMs }
  )

/** Ends the session from the page, as an app would; a failure (already gone) is not this probe's business. */
export const endPageSession = (page: Page, sessionId: string) =>
  page.evaluate(
    (sessionId) =>
      window.e2e
        .session(sessionId)
        .end()
        .catch(() => undefined),
    sessionId
  )

/** The session's log as Core replays it to a new subscriber (no tool claim) up to `lastSeq`, over its socket. */
export const coreLog = async (home: string, origin: string, sessionId: string, lastSeq: number) => {
  const info = await liveCore(home)
  if (info === undefined) throw new Error("no live Core for the chain's home")
  const replay = Effect.gen(function* () {
    const client = yield* hostClient(info)
    const params = { origin: origin as Origin, sessionId: sessionId as SessionId, afterSeq: 0, claimTools: false }
    const events = yield* collectEvents(client["session.subscribe"](params))
    yield* events.next((event): event is SessionEvent => event.seq >= lastSeq, 10_000).pipe(Effect.ignore)
    return events.seen.filter((event) => event.seq <= lastSeq)
  })
  return Effect.runPromise(Effect.scoped(replay))
}

/** A page-visible item: what the SDK hands a page callback for one Core event, keyed by the event's seq. */
type Item = readonly [seq: number, kind: Seen["kind"], text: string]

/** The items the SDK surfaces for every event (never for tool events; a status only when it changes). */
const itemsOfLog = (log: ReadonlyArray<SessionEvent>): Array<Item> =>
  log.flatMap((event): Array<Item> => {
    switch (event.type) {
      case "chat":
        return [[event.seq, "chat", event.text]]
      case "chat_delta":
        return [[event.seq, "delta", event.delta]]
      case "turn_completed":
        return [[event.seq, "turn", event.reason]]
      case "error":
        return [[event.seq, "error", event.error.code]]
      default:
        return []
    }
  })

/**
 * What is wrong between the page's records and Core's log: the chats, deltas, errors and completions must be the
 * log's, each once and in order (nothing lost, doubled or reordered across the reconnect); every status the page
 * saw must be the status Core's event of that seq set; seqs strictly increase; one completion per turn.
 */
export const pageProblems = (seen: ReadonlyArray<Seen>, log: ReadonlyArray<SessionEvent>): Array<string> => {
  const problems: Array<string> = []
  const fromCore = seen.filter((item) => item.source === "core")
  const seqs = fromCore.map((item) => item.seq)
  if (seqs.some((seq, i) => i > 0 && seq <= seqs[i - 1]!)) problems.push(`seqs not increasing: ${seqs.join(",")}`)
  const turns = new Map<string, number>()
  for (const item of fromCore) if (item.kind === "turn") turns.set(item.turnId!, (turns.get(item.turnId!) ?? 0) + 1)
  for (const [turn, count] of turns) if (count !== 1) problems.push(`turn ${turn}: ${count} completions`)
  const pageItems = fromCore
    .filter((item) => item.kind !== "status" && item.kind !== "ended")
    .map((item): Item => [item.seq, item.kind, item.text])
  const logItems = itemsOfLog(log)
  if (JSON.stringify(pageItems) !== JSON.stringify(logItems)) {
    problems.push(`log: page saw ${pageItems.length} items, Core's log has ${logItems.length}`)
  }
  const bySeq = new Map(log.map((event) => [event.seq, event]))
  for (const item of fromCore.filter((item) => item.kind === "status")) {
    const event = bySeq.get(item.seq)
    if (event?.type !== "status_changed" || event.status !== item.text) {
      problems.push(`log: status ${item.text} at seq ${item.seq} is not Core's`)
    }
  }
  return problems
}

export interface ProcessInfo {
  readonly pid: number
  readonly ppid: number
  readonly argv: ReadonlyArray<string>
}

const live = async (pid: string): Promise<ProcessInfo | undefined> => {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  if (fields.length < 2 || fields[0] === "Z") return undefined
  const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")
  return { pid: Number(pid), ppid: Number(fields[1]), argv: cmdline.split("\0").filter((arg) => arg !== "") }
}

const processes = async (keep: (info: ProcessInfo, environ: string) => boolean): Promise<Array<ProcessInfo>> => {
  const names = (await readdir("/proc")).filter((name) => /^\d+$/.test(name))
  const found = await Promise.all(
    names.map(async (name) => {
      const info = await live(name)
      if (info === undefined) return []
      const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "")
      return keep(info, environ) ? [info] : []
    })
  )
  return found.flat()
}

/** Live native hosts the browser started for `home` (the launcher execs node on the host entry). */
export const nativeHosts = (home: string) =>
  processes(
    (info, environ) => info.argv.includes(LAYOUT.hostEntry) && environ.split("\0").includes(`PEDELEC_HOME=${home}`)
  )

/** The extension renderers (its service worker runs in one) below `browserPid`, our Chromium's main process. */
export const extensionRenderers = async (browserPid: number) => {
  const all = await processes(() => true)
  const parent = new Map(all.map((info) => [info.pid, info.ppid]))
  const below = (pid: number) => {
    for (let at = parent.get(pid); at !== undefined && at > 1; at = parent.get(at)) if (at === browserPid) return true
    return false
  }
  // Chromium rewrites its process title: the cmdline is one space-separated string, not one argument per NUL.
  const flags = (info: ProcessInfo) => ` ${info.argv.join(" ")} `
  return all.filter(
    (info) =>
      flags(info).includes(" --type=renderer ") && flags(info).includes(" --extension-process ") && below(info.pid)
  )
}

export const sigkill = (pid: number) => {
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // Gone already: the point fell after it exited.
  }
}
