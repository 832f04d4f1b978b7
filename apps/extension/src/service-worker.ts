/**
 * The MV3 service worker's entry. Every Chrome listener is registered here, synchronously, in the worker's first
 * turn: Chrome only wakes a stopped worker for listeners that exist then. Each listener does the least it must in its
 * own turn (a page port gets its mailbox at once, browser-e2e.md P4) and hands the rest to the one runtime built for
 * this worker's life. Nothing else lives here: the services are in WorkerLayer.ts.
 */
import { PAGE_PORT_NAME } from "@pedelec/contracts/link/PageLink"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { Approvals } from "./approval/Approvals.ts"
import { Chrome } from "./browser/Chrome.ts"
import { Confirmations } from "./confirm/Confirmations.ts"
import { PagePorts } from "./page/PagePorts.ts"
import { PortMailbox } from "./page/PortMailbox.ts"
import { UiRequests } from "./ui/UiRequests.ts"
import { workerLayer } from "./WorkerLayer.ts"

const runtime = ManagedRuntime.make(workerLayer(Chrome.layer))

chrome.runtime.onConnectExternal.addListener((port) => {
  if (port.name !== PAGE_PORT_NAME) return port.disconnect()
  const mailbox = new PortMailbox(port)
  runtime.runFork(PagePorts.use((ports) => ports.attach(mailbox)))
})

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  // Only this extension's own pages; web pages reach the worker through onConnectExternal alone.
  if (sender.id !== chrome.runtime.id || sender.url === undefined) return false
  const senderPath = new URL(sender.url).pathname
  runtime
    .runPromise(UiRequests.use((requests) => requests.handle(message, senderPath)))
    .then(sendResponse, (error: unknown) =>
      sendResponse({ ok: false, message: `The extension failed: ${String(error)}` })
    )
  // Keeps the channel open for the asynchronous answer.
  return true
})

chrome.windows.onRemoved.addListener((windowId) => {
  runtime.runFork(Approvals.use((approvals) => approvals.windowClosed(windowId)))
  runtime.runFork(Confirmations.use((confirmations) => confirmations.windowClosed(windowId)))
})

/**
 * Builds the services now (closing an approval window a stopped worker left behind) and counts worker starts in
 * `chrome.storage.session`, harmless in production, so tests can see a restart.
 */
runtime.runFork(
  Effect.gen(function* () {
    yield* Approvals
    const { session } = yield* Chrome
    const stored = yield* Effect.promise(() => session.get("swStarts"))
    const starts = typeof stored.swStarts === "number" ? stored.swStarts : 0
    yield* Effect.promise(() => session.set({ swStarts: starts + 1 }))
  })
)
