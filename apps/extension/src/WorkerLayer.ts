/**
 * WorkerLayer — the service worker's services, wired once per worker start. Given the Chrome layer, so the unit tests
 * build the same graph over a fake browser. service-worker.ts runs it in a ManagedRuntime that lives as long as the
 * worker does.
 */
import * as Layer from "effect/Layer"
import { Approvals } from "./approval/Approvals.ts"
import { Grants } from "./approval/Grants.ts"
import type { Chrome } from "./browser/Chrome.ts"
import { Confirmations } from "./confirm/Confirmations.ts"
import { HostCalls } from "./host/HostCalls.ts"
import { NativeLink } from "./host/NativeLink.ts"
import { Revocation } from "./options/Revocation.ts"
import { PageConnection } from "./page/PageConnection.ts"
import { PagePorts } from "./page/PagePorts.ts"
import { UiRequests } from "./ui/UiRequests.ts"

export type WorkerServices =
  | Chrome
  | Grants
  | NativeLink
  | Approvals
  | Confirmations
  | HostCalls
  | PageConnection
  | PagePorts
  | Revocation
  | UiRequests

export const workerLayer = (chrome: Layer.Layer<Chrome>): Layer.Layer<WorkerServices> => {
  const storage = Layer.mergeAll(Grants.layer, NativeLink.layer).pipe(Layer.provideMerge(chrome))
  const approvals = Layer.mergeAll(Approvals.layer, Confirmations.layer).pipe(Layer.provideMerge(storage))
  const hostCalls = HostCalls.layer.pipe(Layer.provideMerge(approvals))
  const pages = PageConnection.layer.pipe(Layer.provideMerge(hostCalls))
  const ports = PagePorts.layer.pipe(Layer.provideMerge(pages))
  const revocation = Revocation.layer.pipe(Layer.provideMerge(ports))
  return UiRequests.layer.pipe(Layer.provideMerge(revocation))
}
