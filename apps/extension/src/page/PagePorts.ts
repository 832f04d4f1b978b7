/**
 * PagePorts — the live page ports of this worker, per origin. `attach` takes a port whose mailbox service-worker.ts
 * opened synchronously, reads its origin from Chrome's `sender` (never from a message), gives it a Scope that closes
 * when the page disconnects (ending its in-flight requests, any approval it waits on, and its native link) and starts
 * its PageConnection. `disconnectOrigin` is how a revocation reaches the pages: it lets Core's `ended` events through,
 * then posts the reason before disconnecting (the page sees no reason otherwise, browser-e2e.md P6).
 */
import { Origin } from "@pedelec/contracts/Ids"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { PageConnection, type PageConnectionHandle } from "./PageConnection.ts"
import type { PortMailbox } from "./PortMailbox.ts"

interface LivePort {
  readonly mailbox: PortMailbox
  readonly connection: PageConnectionHandle
  readonly scope: Scope.Closeable
}

const isOrigin = Schema.is(Origin)

export class PagePorts extends Context.Service<
  PagePorts,
  {
    readonly attach: (mailbox: PortMailbox) => Effect.Effect<void>
    /** Ends every port of `origin` after telling it `error`; answers how many there were. */
    readonly disconnectOrigin: (origin: Origin, error: PedelecError) => Effect.Effect<number>
    /** How many page ports are open, per origin. */
    readonly count: Effect.Effect<ReadonlyMap<Origin, number>>
  }
>()("pedelec/extension/PagePorts") {
  static readonly layer = Layer.effect(
    PagePorts,
    Effect.gen(function* () {
      const pageConnection = yield* PageConnection
      const live = new Map<Origin, Set<LivePort>>()

      const attach = Effect.fn("PagePorts.attach")(function* (mailbox: PortMailbox) {
        const { port } = mailbox
        const origin = port.sender?.origin
        if (!isOrigin(origin)) {
          const error = PedelecError.fromCode("PROTOCOL_ERROR", "extension", {
            details: { reason: "Pedelec serves http(s) pages only; this page's origin is not one" }
          })
          yield* Effect.sync(() => {
            try {
              port.postMessage({ kind: "notice", error: error.toWire() })
              port.disconnect()
            } catch {
              // Already gone.
            }
          })
          return
        }
        const scope = yield* Scope.make()
        const fibers = yield* FiberSet.make().pipe(Scope.provide(scope))
        const run = yield* FiberSet.runtime(fibers)()
        const connection = yield* pageConnection.open(port, origin).pipe(Scope.provide(scope))
        const entry: LivePort = { mailbox, connection, scope }
        const ports = live.get(origin) ?? new Set()
        ports.add(entry)
        live.set(origin, ports)
        yield* Scope.addFinalizer(
          scope,
          Effect.sync(() => {
            ports.delete(entry)
            if (ports.size === 0 && live.get(origin) === ports) live.delete(origin)
          })
        )
        mailbox.start(
          (message) => run(connection.handle(message)),
          () => Effect.runFork(Scope.close(scope, Exit.void))
        )
      })

      const disconnectOrigin = Effect.fn("PagePorts.disconnectOrigin")(function* (origin: Origin, error: PedelecError) {
        const ports = [...(live.get(origin) ?? [])]
        yield* Effect.forEach(ports, (entry) => entry.connection.drain, { concurrency: "unbounded", discard: true })
        for (const entry of ports) {
          entry.connection.post({ kind: "notice", error: error.toWire() })
          try {
            entry.mailbox.port.disconnect()
          } catch {
            // Already gone.
          }
          // Our own disconnect() fires no onDisconnect here, so the scope is closed by hand.
          yield* Scope.close(entry.scope, Exit.void)
        }
        return ports.length
      })

      const count = Effect.sync(
        () => new Map([...live].map(([origin, ports]) => [origin, ports.size] as const)) as ReadonlyMap<Origin, number>
      )

      return PagePorts.of({ attach, disconnectOrigin, count })
    })
  )
}
