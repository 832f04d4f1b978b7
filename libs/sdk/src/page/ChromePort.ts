/**
 * The slice of Chrome's page-side messaging API the SDK uses, typed here so that page authors need no
 * `@types/chrome`, and the one place that touches `globalThis.chrome`. Nothing runs at import: a server render that
 * imports the SDK never reaches for `window` or `chrome`.
 */
import { PAGE_PORT_NAME } from "@pedelec/contracts/link/PageLink"

export interface ChromePort {
  postMessage(message: unknown): void
  disconnect(): void
  readonly onMessage: { addListener(listener: (message: unknown) => void): void }
  readonly onDisconnect: { addListener(listener: () => void): void }
}

interface ChromeRuntime {
  connect(extensionId: string, info: { name: string }): ChromePort
  readonly lastError?: { readonly message?: string } | undefined
}

const runtime = (): ChromeRuntime | undefined => {
  if (typeof window === "undefined") return undefined
  const chrome = (globalThis as { chrome?: { runtime?: Partial<ChromeRuntime> } }).chrome
  return typeof chrome?.runtime?.connect === "function" ? (chrome.runtime as ChromeRuntime) : undefined
}

export type Opened = { readonly port: ChromePort } | { readonly unavailable: string }

/**
 * Chrome defines `chrome.runtime` on a page only when some installed extension lists the page's origin in
 * `externally_connectable`; a malformed id throws synchronously. Both mean the extension cannot be reached.
 */
export const openPort = (extensionId: string): Opened => {
  const chromeRuntime = runtime()
  if (chromeRuntime === undefined) {
    return {
      unavailable:
        typeof window === "undefined"
          ? "there is no browser page here (server rendering or a worker)"
          : "chrome.runtime is not defined on this page: the extension is not installed or not enabled for this site"
    }
  }
  try {
    return { port: chromeRuntime.connect(extensionId, { name: PAGE_PORT_NAME }) }
  } catch (error) {
    return { unavailable: error instanceof Error ? error.message : String(error) }
  }
}

/** Why Chrome closed a port, if it said: absent when the extension closed it or its service worker stopped. */
export const lastErrorMessage = (): string | undefined => runtime()?.lastError?.message ?? undefined
