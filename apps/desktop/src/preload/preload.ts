/**
 * preload — the renderer's only way out of its sandbox: `window.pedelecDesktop` with `call` and `watch`
 * (DesktopLink's `DesktopPreloadApi`), each moving encoded bridge messages over Electron IPC and nothing else. No
 * other Electron or Node API reaches the page. It decodes nothing: main decodes every request, the renderer every
 * answer. Bundled on its own as CommonJS (a sandboxed preload cannot be a module) by scripts/build-main.ts.
 */
import type { DesktopPreloadApi, PRELOAD_GLOBAL } from "@pedelec/contracts/link/DesktopLink"
import { contextBridge, type IpcRendererEvent, ipcRenderer } from "electron"
import { CHANNELS } from "./Channels.ts"

const GLOBAL: typeof PRELOAD_GLOBAL = "pedelecDesktop"

let watches = 0

const field = (message: unknown, name: string): unknown =>
  typeof message === "object" && message !== null && name in message
    ? (message as Record<string, unknown>)[name]
    : undefined

/** A stream's last item: after it main sends nothing more for that watch. */
const isTerminal = (item: unknown) => field(item, "kind") === "end" || field(item, "kind") === "error"

const api: DesktopPreloadApi = {
  call: (request) => ipcRenderer.invoke(CHANNELS.call, request),
  watch: (request, onItem) => {
    const id = `watch-${++watches}`
    const stopListening = () => ipcRenderer.off(CHANNELS.event, listener)
    const listener = (_event: IpcRendererEvent, message: unknown) => {
      if (field(message, "id") !== id) return
      const item = field(message, "item")
      if (isTerminal(item)) stopListening()
      onItem(item)
    }
    ipcRenderer.on(CHANNELS.event, listener)
    ipcRenderer.send(CHANNELS.watch, { id, request })
    return () => {
      stopListening()
      ipcRenderer.send(CHANNELS.unwatch, { id })
    }
  }
}

contextBridge.exposeInMainWorld(GLOBAL, api)
