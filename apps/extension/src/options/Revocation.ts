/**
 * Revocation — takes back what the user granted (SPEC §4, §12). Revoking an origin removes its approval and path
 * grants first (so nothing it sends from now on passes the gate), then asks Core to end its sessions (`origin.revoke`,
 * on a native port of its own), then lets the `ended` events reach its pages and disconnects them with an
 * APPROVAL_REQUIRED notice. Core unreachable does not stop the local part: the grants are gone and the pages are
 * disconnected, which closes their native ports, so Core's lease ends `autoEndOnDisconnect` sessions on its own.
 * Revoking a path only removes its grant: sessions already running in it keep running until they end.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import { PedelecError, type PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Grants } from "../approval/Grants.ts"
import { HostCalls } from "../host/HostCalls.ts"
import { PagePorts } from "../page/PagePorts.ts"

export interface RevokeOutcome {
  /** Sessions Core ended; null when Core could not be asked. */
  readonly ended: number | null
  readonly disconnectedPorts: number
  readonly coreError?: PedelecErrorWire
}

export class Revocation extends Context.Service<
  Revocation,
  {
    readonly revokeOrigin: (origin: Origin) => Effect.Effect<RevokeOutcome>
    readonly revokePath: (origin: Origin, path: string) => Effect.Effect<void>
  }
>()("pedelec/extension/Revocation") {
  static readonly layer = Layer.effect(
    Revocation,
    Effect.gen(function* () {
      const grants = yield* Grants
      const hostCalls = yield* HostCalls
      const pagePorts = yield* PagePorts

      const revokeOrigin = Effect.fn("Revocation.revokeOrigin")(function* (origin: Origin) {
        yield* grants.revokeOrigin(origin)
        const core = yield* hostCalls.call("origin.revoke", { origin }).pipe(Effect.result)
        const notice = PedelecError.fromCode("APPROVAL_REQUIRED", "extension", { details: { origin } })
        const disconnectedPorts = yield* pagePorts.disconnectOrigin(origin, notice)
        const outcome: RevokeOutcome =
          core._tag === "Success"
            ? { ended: core.success.ended, disconnectedPorts }
            : { ended: null, disconnectedPorts, coreError: core.failure.toWire() }
        return outcome
      })

      return Revocation.of({ revokeOrigin, revokePath: (origin, path) => grants.revokePath(origin, path) })
    })
  )
}
