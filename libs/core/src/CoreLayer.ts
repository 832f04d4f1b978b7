/**
 * CoreLayer — the composition root of Core: the lock, the stores, the session machinery, the asset server and the
 * IPC server, wired into one layer that the headless daemon and the Electron app both run. Composition only; no
 * behaviour here.
 */
import { NodeServices } from "@effect/platform-node"
import * as Layer from "effect/Layer"
import { AssetAccess } from "./AssetAccess.ts"
import { AssetFiles } from "./AssetFiles.ts"
import { AssetServer } from "./AssetServer.ts"
import { AssetTickets } from "./AssetTickets.ts"
import { CoreConfig } from "./CoreConfig.ts"
import { CoreLock } from "./CoreLock.ts"
import { CorePaths } from "./CorePaths.ts"
import { CoreSecretLive, CoreServerLayer } from "./CoreServer.ts"
import { EventLog } from "./EventLog.ts"
import { NodeShim } from "./NodeShim.ts"
import { OllamaProbe } from "./OllamaProbe.ts"
import { ProcessRecords } from "./ProcessRecords.ts"
import { ProviderChoice } from "./ProviderChoice.ts"
import { Providers } from "./Providers.ts"
import { SecretScrubber } from "./SecretScrubber.ts"
import { SessionEvents } from "./SessionEvents.ts"
import { SessionStore } from "./SessionStore.ts"
import { Sessions } from "./Sessions.ts"
import { SettingsStore } from "./SettingsStore.ts"
import { SitePolicies } from "./SitePolicies.ts"
import { ToolRouter } from "./ToolRouter.ts"
import { TurnRunner } from "./TurnRunner.ts"
import { Workspaces } from "./Workspaces.ts"

const Stores = Layer.mergeAll(SettingsStore.layer, Workspaces.layer, EventLog.layer, SessionStore.layer, NodeShim.layer)

/** Sessions and what they run on, over a provider registry (Core's own, or a test's adapters). */
export const sessionMachinery = <E, R>(providers: Layer.Layer<Providers, E, R>) =>
  Sessions.layer.pipe(
    Layer.provideMerge(ProviderChoice.layer),
    Layer.provideMerge(Layer.mergeAll(ToolRouter.layer, TurnRunner.layer, ProcessRecords.layer, SitePolicies.layer)),
    Layer.provideMerge(SessionEvents.layer),
    Layer.provideMerge(SecretScrubber.logger.pipe(Layer.provideMerge(SecretScrubber.layer))),
    Layer.provideMerge(providers),
    Layer.provideMerge(Stores)
  )

/** The loopback asset server starts with Core and stops before the sessions end. */
const Assets = AssetAccess.layer.pipe(
  Layer.provideMerge(AssetServer.layer),
  Layer.provideMerge(Layer.mergeAll(AssetTickets.layer, AssetFiles.layer))
)

/** Everything but the paths and the config, which the host process chooses. */
export const CoreLayerNoDeps = CoreServerLayer.pipe(
  Layer.provideMerge(Layer.mergeAll(Assets, OllamaProbe.layer)),
  Layer.provideMerge(sessionMachinery(Providers.layer)),
  Layer.provideMerge(CoreSecretLive),
  Layer.provideMerge(CoreLock.layer),
  Layer.provideMerge(NodeServices.layer)
)

/** Core for this process's environment (`PEDELEC_HOME`, `PEDELEC_*` knobs). */
export const CoreLayer = CoreLayerNoDeps.pipe(Layer.provide(Layer.mergeAll(CorePaths.layer, CoreConfig.layer)))
