/**
 * probe — the test page's side of the suite, bundled by TestPage and run in Chromium: it loads the SDK build, and
 * gives `page.evaluate` bodies what they share: one client per extension id, the tool manifest the agent scripts
 * call, sessions kept across evaluations, and a recorder of every event a session delivers (with its ctx), so a
 * test can compare text, order, `seq` and `turnId` from the page's point of view. Browser code: no node imports.
 */
import { defineTool, Pedelec, PedelecError, type PedelecSession } from "@pedelec/sdk"
import { runEarlierPage } from "./earlier.ts"

export interface Seen {
  readonly kind: "chat" | "delta" | "status" | "error" | "ended" | "turn"
  /** The chat text, the delta, the status, the error code, or the turn's reason. */
  readonly text: string
  readonly seq: number
  readonly turnId: string | undefined
  readonly source: string
}

export interface Failure {
  readonly code: string
  readonly message: string
  readonly details: unknown
  /** The component that refused (the error's `source`). */
  readonly source?: string
}

/** How a turn started with `startTurn` ended: its result, or the error `sendText` rejected with. */
export type TurnOutcome =
  | { readonly result: Awaited<ReturnType<PedelecSession["sendText"]>> }
  | { readonly failure: Failure | undefined }

const NONE = { type: "object", properties: {}, additionalProperties: false } as const

/** The tools every test session declares; handlers are registered per test (`orphan` never gets one). */
export const TOOLS = [
  defineTool({
    name: "add",
    description: "Adds two numbers.",
    argsSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      additionalProperties: false
    }
  }),
  defineTool({
    name: "echo",
    description: "Returns its text.",
    argsSchema: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false
    }
  }),
  defineTool({ name: "wait", description: "Waits until it is cancelled.", argsSchema: NONE }),
  defineTool({ name: "fail", description: "Always throws.", argsSchema: NONE }),
  defineTool({ name: "orphan", description: "Declared, never handled.", argsSchema: NONE }),
  defineTool({
    name: "blob",
    description: "Returns a string of the given number of bytes.",
    argsSchema: {
      type: "object",
      properties: { bytes: { type: "integer", minimum: 0, maximum: 8_388_608 } },
      required: ["bytes"],
      additionalProperties: false
    }
  })
]

const clients = new Map<string, Pedelec>()
const sessions = new Map<string, PedelecSession>()

const probe = {
  Pedelec,
  /** A page written for the earlier SDK, run as it is (earlier.ts). */
  earlier: runEarlierPage,
  skills: { guidance: "Tools of the Pedelec E2E test page.", tools: TOOLS },
  sessions,

  /** One client per extension id for the page's lifetime, as an app would hold it. */
  client: (extensionId: string): Pedelec => {
    const existing = clients.get(extensionId)
    if (existing !== undefined) return existing
    const created = new Pedelec({ extensionId })
    clients.set(extensionId, created)
    return created
  },

  /** Keeps the session for later evaluations and records everything it delivers from now on. */
  keep: (session: PedelecSession): Array<Seen> => {
    sessions.set(session.sessionId, session)
    return probe.record(session)
  },

  session: (sessionId: string): PedelecSession => {
    const session = sessions.get(sessionId)
    if (session === undefined) throw new Error(`no session ${sessionId} on this page`)
    return session
  },

  records: new Map<string, Array<Seen>>(),

  record: (session: PedelecSession): Array<Seen> => {
    const seen: Array<Seen> = []
    probe.records.set(session.sessionId, seen)
    const push = (
      kind: Seen["kind"],
      text: string,
      ctx: { seq: number; turnId?: string | undefined; source: string }
    ) => seen.push({ kind, text, seq: ctx.seq, turnId: ctx.turnId, source: ctx.source })
    session.onChat((text, ctx) => push("chat", text, ctx))
    session.onChatDelta((delta, ctx) => push("delta", delta, ctx))
    session.onStatus((status, ctx) => push("status", status, ctx))
    session.onError((error, ctx) => push("error", error.code, ctx))
    session.onEnded((ctx) => push("ended", "", ctx))
    session.onTurnCompleted((result, ctx) => push("turn", result.reason, ctx))
    return seen
  },

  turns: new Map<string, Promise<TurnOutcome>>(),

  /** Sends a turn without waiting for it, so a test can act while it runs; `turn` gives its outcome later. */
  startTurn: (sessionId: string, text: string): void => {
    const running = probe
      .session(sessionId)
      .sendText(text)
      .then(
        (result): TurnOutcome => ({ result }),
        async (error: unknown): Promise<TurnOutcome> => ({ failure: await probe.failure(Promise.reject(error)) })
      )
    probe.turns.set(sessionId, running)
  },

  turn: (sessionId: string): Promise<TurnOutcome> => {
    const running = probe.turns.get(sessionId)
    if (running === undefined) throw new Error(`no turn was started on ${sessionId}`)
    return running
  },

  /** What a rejected promise failed with, as plain data; undefined if it resolved. */
  failure: async (promise: Promise<unknown>): Promise<Failure | undefined> => {
    try {
      await promise
      return undefined
    } catch (error) {
      if (error instanceof PedelecError) {
        return { code: error.code, message: error.message, details: error.details, source: error.source }
      }
      return { code: "NOT_A_PEDELEC_ERROR", message: String(error), details: undefined }
    }
  }
}

export type Probe = typeof probe

declare global {
  interface Window {
    e2e: Probe
  }
}

window.e2e = probe
document.getElementById("state")!.textContent = "ready"
