/**
 * bench-page — the bench's side of the test page, bundled by PageRuns and run beside libs/chain's probe: the raw echo
 * measurements (a port straight to the echo relay extension) and the Pedelec turns, each timed inside the page so
 * that no Playwright round trip is in a figure. `evaluate` bodies only call these. Browser code: no node imports.
 */
/// <reference types="chrome" />
// Type only: the probe is its own script on the page (window.e2e); bundling it in here would run it twice.
import type { Probe } from "@pedelec/chain/page/probe"

export interface EchoRun {
  /** performance.now() from the first post to the last reply. */
  readonly ms: number
  readonly messages: number
}

export interface BurstRun {
  /** From the request to the last frame, and from the first frame to the last. */
  readonly ms: number
  readonly firstToLastMs: number
  readonly messages: number
  readonly chars: number
}

/** One event as the page got it: Core's seq, Date.now() (to set against Core's `at`), perf time, text length. */
export type Arrival = readonly [seq: number, wall: number, perf: number, chars: number]

export interface TurnRun {
  readonly turnId: string
  readonly reason: string
  readonly sentAtWall: number
  readonly sentAt: number
  readonly doneAt: number
  readonly deltas: Array<Arrival>
  readonly deltaTexts: Array<string>
  readonly chats: Array<Arrival>
  readonly chatTexts: Array<string>
}

type Message = { readonly i?: number; readonly hostGone?: string }

/** A turn left running so an agent-side client (the bench's MCP server) can call the page's tools during it. */
let held: { readonly done: Promise<unknown>; readonly release: () => Promise<void> } | undefined

let port: chrome.runtime.Port | undefined
let waiting: ((message: Message) => void) | undefined

const echoPort = (): chrome.runtime.Port => {
  if (port === undefined) throw new Error("echoConnect first")
  return port
}

/** Resolves after `count` messages arrived (from now), with the time of the first and the last. */
const collect = (count: number) =>
  new Promise<{ readonly first: number; readonly last: number }>((resolve, reject) => {
    let seen = 0
    let first = 0
    waiting = (message) => {
      if (message.hostGone !== undefined) return reject(new Error(`echo host gone: ${message.hostGone}`))
      if (seen === 0) first = performance.now()
      seen++
      if (seen === count) {
        waiting = undefined
        resolve({ first, last: performance.now() })
      }
    }
  })

const bench = {
  echoConnect: async (extensionId: string): Promise<void> => {
    port = chrome.runtime.connect(extensionId)
    port.onMessage.addListener((message: Message) => waiting?.(message))
    port.onDisconnect.addListener(() => waiting?.({ hostGone: "the relay disconnected" }))
    const ready = collect(1)
    echoPort().postMessage({ i: -1 })
    await ready
  },

  /** `n` sequential round trips of one message of about `chars` characters; one sample each. */
  echoRoundTrips: async (n: number, chars: number): Promise<Array<number>> => {
    const data = "x".repeat(chars)
    const samples: Array<number> = []
    for (let i = 0; i < n; i++) {
      const back = collect(1)
      const started = performance.now()
      echoPort().postMessage({ i, data })
      await back
      samples.push(performance.now() - started)
    }
    return samples
  },

  /** `n` messages posted at once, then every echo awaited. */
  echoPipelined: async (n: number, chars: number): Promise<EchoRun> => {
    const data = "x".repeat(chars)
    const back = collect(n)
    const started = performance.now()
    for (let i = 0; i < n; i++) echoPort().postMessage({ i, data })
    const { last } = await back
    return { ms: last - started, messages: n }
  },

  /** The host sends `n` frames of `chars` × `char` on its own: one way, host → worker → page, like deltas. */
  echoBurst: async (n: number, chars: number, char: string): Promise<BurstRun> => {
    const back = collect(n)
    const started = performance.now()
    echoPort().postMessage({ burst: n, chars, char })
    const { first, last } = await back
    return { ms: last - started, firstToLastMs: last - first, messages: n, chars }
  },

  /** Runs one turn on a kept session with an `echo` handler that answers at once; every delta and chat timed. */
  turn: async (sessionId: string, text: string): Promise<TurnRun> => {
    const probe: Probe = window.e2e
    const session = probe.session(sessionId)
    const deltas: Array<Arrival> = []
    const chats: Array<Arrival> = []
    const chatTexts: Array<string> = []
    const deltaTexts: Array<string> = []
    const offDelta = session.onChatDelta((delta, ctx) => {
      deltas.push([ctx.seq, ctx.receivedAt, performance.now(), delta.length])
      // Only the short ones: the lone deltas' emit stamps, not the size cases.
      if (delta.length < 64) deltaTexts.push(delta)
    })
    const offChat = session.onChat((chat, ctx) => {
      chats.push([ctx.seq, ctx.receivedAt, performance.now(), chat.length])
      // Only the short lines: the tool calls' reports, not the megabytes of the size cases.
      if (chat.length < 4096) chatTexts.push(chat)
    })
    const offTool = session.onTool<{ readonly text: string }>("echo", ({ text }) => ({ echoed: text }))
    const sentAtWall = Date.now()
    const sentAt = performance.now()
    try {
      const result = await session.sendText(text, { timeoutMs: 60_000 })
      const doneAt = performance.now()
      const { turnId, reason } = result
      return { turnId, reason, sentAtWall, sentAt, doneAt, deltas, deltaTexts, chats, chatTexts }
    } finally {
      offDelta()
      offChat()
      offTool()
    }
  },

  /**
   * Starts a turn running `text` (one that sleeps) with the `echo` handler answering at once, and returns when Core
   * has it running; `releaseTurn` cancels it. Tool calls during it come from outside the page (the bench's MCP server).
   */
  holdTurn: async (sessionId: string, text: string): Promise<void> => {
    const session = window.e2e.session(sessionId)
    const offTool = session.onTool<{ readonly text: string }>("echo", ({ text }) => ({ echoed: text }))
    const running = new Promise<void>((resolve) => {
      const off = session.onStatus((status) => {
        if (status !== "running") return
        off()
        resolve()
      })
    })
    const done = session.sendText(text, { timeoutMs: 600_000 }).catch(() => undefined)
    held = {
      done,
      release: async () => {
        await session.cancel()
        await done
        offTool()
      }
    }
    await running
  },

  releaseTurn: async (): Promise<void> => {
    await held?.release()
    held = undefined
  }
}

export type Bench = typeof bench

declare global {
  interface Window {
    bench: Bench
  }
}

window.bench = bench
