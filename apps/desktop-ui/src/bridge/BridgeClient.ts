/**
 * BridgeClient — how the renderer reaches main, and nothing else: the preload's `window.pedelecDesktop` under
 * Electron, or the loopback transport (fetch with the per-run token) in the tests and the preview. Both move
 * encoded DesktopLink messages only; decoding them, and what a failure means for the UI, is Desktop.ts's.
 */

import { type DesktopPreloadApi, LOOPBACK, PRELOAD_GLOBAL } from "@pedelec/contracts/link/DesktopLink"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"

export type BridgeClient = DesktopPreloadApi

/** What the renderer says when main itself cannot be reached (the loopback server stopped, or answered garbage). */
export const unreachable = (reason: string): PedelecErrorWire => ({
  code: "CORE_RUNTIME_UNAVAILABLE",
  message: `The desktop app cannot be reached (${reason}). It reconnects by itself; if this stays, restart Pedelec.`,
  retryable: true,
  source: "desktop"
})

const post = (path: string, token: string, body: unknown, signal?: AbortSignal) =>
  fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", [LOOPBACK.tokenHeader]: token },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal })
  })

const loopbackCall = (token: string) => async (request: unknown) => {
  try {
    const response = await post(LOOPBACK.call, token, request)
    return await response.json()
  } catch (error) {
    return { ok: false, error: unreachable(String(error)) }
  }
}

/** Reads NDJSON lines as they arrive and hands each decoded line on; a dropped body ends with an error item. */
const pump = async (body: ReadableStream<Uint8Array>, onItem: (item: unknown) => void) => {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  while (true) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    const lines = buffer.split("\n")
    buffer = lines.pop() ?? ""
    for (const line of lines) if (line.length > 0) onItem(JSON.parse(line))
  }
}

const isTerminal = (item: unknown) =>
  typeof item === "object" && item !== null && "kind" in item && (item.kind === "end" || item.kind === "error")

const loopbackWatch = (token: string) => (request: unknown, onItem: (item: unknown) => void) => {
  const abort = new AbortController()
  let ended = false
  const deliver = (item: unknown) => {
    ended ||= isTerminal(item)
    onItem(item)
  }
  // A body that stops without its terminal item means the server went away: say so, once.
  const dropped = (reason: string) => {
    if (!ended && !abort.signal.aborted) deliver({ kind: "error", error: unreachable(reason) })
  }
  post(LOOPBACK.watch, token, request, abort.signal)
    .then((response) => (response.body === null ? Promise.reject(new Error("no body")) : pump(response.body, deliver)))
    .then(() => dropped("the stream closed"))
    .catch((error: unknown) => dropped(String(error)))
  return () => abort.abort()
}

/** The loopback transport's token comes in the page's fragment, which no request carries; it is dropped from the URL. */
const loopbackToken = (): string | undefined => {
  const token = new URLSearchParams(window.location.hash.slice(1)).get("token")
  if (token !== null) sessionStorage.setItem("pedelec-token", token)
  history.replaceState(null, "", window.location.pathname)
  return token ?? sessionStorage.getItem("pedelec-token") ?? undefined
}

/** Electron's preload when present, else the loopback transport; undefined when neither is (opened by hand). */
export const pickClient = (): BridgeClient | undefined => {
  const preload = (window as unknown as Record<string, BridgeClient | undefined>)[PRELOAD_GLOBAL]
  if (preload !== undefined) return preload
  const token = loopbackToken()
  return token === undefined ? undefined : { call: loopbackCall(token), watch: loopbackWatch(token) }
}
