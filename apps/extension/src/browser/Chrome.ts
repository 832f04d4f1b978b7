/**
 * Chrome — the few browser APIs the service worker uses, behind one narrow interface: the native port, storage, the
 * approval window, the manifest. The worker reaches Chrome only through this service, so the unit tests run every
 * rule against a small fake (test/FakeChromeApi.ts). It owns no listeners: service-worker.ts registers those at the top
 * level, where MV3 requires them.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/** What the worker needs of a `chrome.runtime.Port`; a real Port satisfies it. */
export interface PortLike {
  readonly name: string
  readonly sender?: { readonly origin?: string | undefined } | undefined
  postMessage(message: unknown): void
  disconnect(): void
  readonly onMessage: { addListener(listener: (message: unknown) => void): void }
  readonly onDisconnect: { addListener(listener: () => void): void }
}

export interface StorageAreaLike {
  get(key: string): Promise<Record<string, unknown>>
  set(items: Record<string, unknown>): Promise<void>
}

export interface ChromeApi {
  readonly extensionVersion: string
  /** Opens a native port; each call starts a new host process (browser-e2e.md P10). */
  readonly connectNative: (name: string) => PortLike
  /** `chrome.runtime.lastError?.message`; meaningful only inside a port's onDisconnect listener. */
  readonly lastErrorMessage: () => string | undefined
  readonly local: StorageAreaLike
  readonly session: StorageAreaLike
  /** Opens an extension page in a popup window the page cannot draw over; resolves its window id. */
  readonly openPopup: (path: string) => Promise<number | undefined>
  readonly closeWindow: (windowId: number) => Promise<void>
}

const fromGlobal = (): ChromeApi => ({
  extensionVersion: chrome.runtime.getManifest().version,
  connectNative: (name) => chrome.runtime.connectNative(name),
  lastErrorMessage: () => chrome.runtime.lastError?.message,
  local: chrome.storage.local,
  session: chrome.storage.session,
  openPopup: async (path) => {
    const window = await chrome.windows.create({
      type: "popup",
      url: chrome.runtime.getURL(path),
      width: 440,
      height: 640,
      focused: true
    })
    return window?.id
  },
  closeWindow: (windowId) => chrome.windows.remove(windowId)
})

export class Chrome extends Context.Service<Chrome, ChromeApi>()("pedelec/extension/Chrome") {
  static readonly layer = Layer.sync(Chrome, fromGlobal)
  static readonly layerWith = (api: ChromeApi) => Layer.succeed(Chrome, api)
}
