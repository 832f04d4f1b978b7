/**
 * CoreServer/HelloGate — the server side of Core IPC's sockets: effect/rpc's socket Protocol (RpcServer's
 * `makeSocketProtocol`, same NDJSON and messages), with a gate before the hello and coded answers where effect/rpc
 * would send a defect. Until a connection's `core.hello` succeeded it may hold at most `PRE_HELLO_LINE` of a line
 * (then the 16 MiB cap of Ndjson.ts), it must say hello within `helloTimeoutMs`, at most `MAX_UNGREETED` such
 * connections exist at once (the oldest is closed for a new one), and any other request is refused PROTOCOL_ERROR; a
 * hello that fails is answered and the connection closed. An unknown tag is PROTOCOL_ERROR, a payload that does not
 * decode INVALID_INPUT with its pointer (effect/rpc 4.1 answers both with a `Die` and has no option for it). A stream
 * is not paced by its client's Acks (they are dropped here) but by the socket: a write waits for it to drain. A
 * connection cut off mid-line gets its coded last line and is read a little longer, so that line is not lost to a
 * reset. It does not serve any method (the handlers) or check a proof (CoreAuth).
 *
 * Measured before the gate: 20 parallel unauthenticated 15 MiB lines took Core to 1.2 GB; each connection holding a
 * partial line pinned ~18 MiB; ~1,000 idle sockets exhausted a 1,024-descriptor limit.
 */
import { issuesOfExit } from "@pedelec/contracts/JsonPointer"
import { PedelecError } from "@pedelec/contracts/PedelecError"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type { Rpc } from "effect/rpc"
import { RpcSerialization, RpcServer } from "effect/rpc"
import type { FromClientEncoded, FromServerEncoded, RequestEncoded } from "effect/rpc/RpcMessage"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type * as Socket from "effect/socket/Socket"
import * as SocketServer from "effect/socket/SocketServer"
import { CoreConfig } from "../CoreConfig.ts"

/** The longest line a connection may send before its hello succeeded: a hello is under 200 bytes. */
export const PRE_HELLO_LINE = 64 * 1024
/** Connections that have not said hello yet, at most; each costs a descriptor and up to PRE_HELLO_LINE. */
export const MAX_UNGREETED = 64

const HELLO = "core.hello"
const NEWLINE = 0x0a
const encodeError = Schema.encodeSync(PedelecError)

const protocolError = (reason: string) => PedelecError.fromCode("PROTOCOL_ERROR", "core", { details: { reason } })

/** A request's coded failure, as effect/rpc's client reads an Exit. */
const failed = (requestId: string | number, error: PedelecError): FromServerEncoded => ({
  _tag: "Exit",
  requestId: String(requestId),
  exit: { _tag: "Failure", cause: [{ _tag: "Fail", error: encodeError(error) }] }
})

/** For the connection as a whole (no request to answer): the client fails whatever it has in flight with it. */
const defect = (error: PedelecError): FromServerEncoded => ({ _tag: "Defect", defect: error.toWire() })

/** One connection's place in the gate. */
interface Gate {
  greeted: boolean
  /** Bytes since the last newline, counted only before the hello (after it Ndjson's cap holds). */
  partial: number
  readonly hellos: Set<string>
  /** The request effect/rpc is handling right now, synchronously: a decode failure is answered within it. */
  current: RequestEncoded | undefined
  /** Cut off mid-line: what still comes is read and dropped until the client goes or LINGER_MS passed. */
  lingering: boolean
  readonly closed: Deferred.Deferred<void>
}

interface Client {
  readonly gate: Gate
  /** Returns once the line is written (and the socket drained, if it had to). */
  readonly write: (response: FromServerEncoded) => Effect.Effect<void>
  /** Half-closes the socket (its writer's release): the client reads its end while Core still reads. */
  readonly endWrites: Effect.Effect<void>
}

/** What every connection shares: the group it serves, the clients, and effect/rpc's side of the protocol. */
interface Shared {
  readonly requests: ReadonlyMap<string, Rpc.AnyWithProps>
  readonly serialization: RpcSerialization.RpcSerialization["Service"]
  readonly helloTimeoutMs: number
  readonly clients: Map<number, Client>
  readonly ungreeted: Set<number>
  readonly disconnects: Queue.Queue<number>
  /** Each method's payload decoder for INVALID_INPUT, compiled on its first failure instead of on every one. */
  readonly decoders: Map<string, (payload: unknown) => Exit.Exit<unknown, Schema.SchemaError>>
  nextId: number
  writeRequest: (clientId: number, message: FromClientEncoded) => Effect.Effect<void>
}

const isDie = (response: FromServerEncoded) =>
  response._tag === "Exit" &&
  response.exit._tag === "Failure" &&
  response.exit.cause.some((reason) => reason._tag === "Die")

/** INVALID_INPUT with the first issue's pointer when `request`'s payload does not decode; else undefined. */
const decodeFailure = (shared: Shared, request: RequestEncoded): PedelecError | undefined => {
  const rpc = shared.requests.get(request.tag)
  if (rpc === undefined) return undefined
  let decode = shared.decoders.get(request.tag)
  if (decode === undefined) {
    decode = Schema.decodeUnknownExit(Schema.toCodecJson(rpc.payloadSchema) as unknown as Schema.Decoder<unknown>)
    shared.decoders.set(request.tag, decode)
  }
  const exit = decode(request.payload)
  if (Exit.isSuccess(exit)) return undefined
  const first = issuesOfExit(exit)[0] ?? { pointer: "", reason: "invalid" }
  return PedelecError.fromCode("INVALID_INPUT", "core", {
    details: { reason: `${first.reason} at /payload${first.pointer}`, pointer: first.pointer, method: request.tag }
  })
}

/** Bytes since the last newline after `data`, given `before` of them. */
const partialAfter = (before: number, data: Uint8Array | string) => {
  const last = typeof data === "string" ? data.lastIndexOf("\n") : data.lastIndexOf(NEWLINE)
  return last === -1 ? before + data.length : data.length - last - 1
}

/** What the gate answers a request with instead of passing it on, if anything. */
const refusalOf = (shared: Shared, gate: Gate, request: RequestEncoded): PedelecError | undefined => {
  if (!shared.requests.has(request.tag)) return protocolError(`Core IPC has no method ${request.tag}`)
  if (request.tag === HELLO || gate.greeted) return undefined
  return protocolError(`say ${HELLO} first: ${request.tag} came before a successful hello`)
}

/**
 * The last line, then the gate closes. A connection cut off (lingering) ends its writes in between, so its client
 * sees the end at once while Core still reads.
 */
const closeWith = (client: Client, last: FromServerEncoded) =>
  Effect.andThen(client.write(last), client.gate.lingering ? client.endWrites : Effect.void).pipe(
    Effect.andThen(Deferred.succeed(client.gate.closed, undefined))
  )

/**
 * How long a connection cut off mid-line is still read after its last line. Closed with the rest of the line unread,
 * the socket sends a reset, and a client whose receive queue still held that line lost it (2 runs in 5 of the
 * pre-hello cap test on a loaded 2-core box). Bounded, so a client that never stops sending still goes.
 */
const LINGER_MS = 1_000

/** Closes with `last`, then reads (and drops) what still comes until the client goes or LINGER_MS passed. */
const cutOff = (client: Client, last: FromServerEncoded) => {
  client.gate.lingering = true
  return closeWith(client, last)
}

/** One request: refused by the gate, or handed to effect/rpc with the gate watching for its decode failure. */
const onRequest = (shared: Shared, id: number, client: Client, request: RequestEncoded): Effect.Effect<void> => {
  const { gate } = client
  const refused = refusalOf(shared, gate, request)
  if (refused !== undefined) return client.write(failed(request.id, refused))
  if (request.tag === HELLO) gate.hellos.add(String(request.id))
  gate.current = request
  return Effect.ensuring(
    shared.writeRequest(id, request),
    Effect.sync(() => {
      gate.current = undefined
    })
  )
}

/** What effect/rpc's socket protocol takes from a client besides requests (an Ack is taken and dropped). */
const CLIENT_MESSAGES: ReadonlySet<string> = new Set(["Interrupt", "Eof", "Ping"])

/** One read from the socket: the pre-hello line cap, then each message it completes. */
const onData =
  (shared: Shared, id: number, client: Client, parser: RpcSerialization.Parser) =>
  (data: Uint8Array | string): Effect.Effect<void> => {
    const { gate } = client
    if (gate.lingering) return Effect.void
    if (!gate.greeted) {
      gate.partial = partialAfter(gate.partial, data)
      if (gate.partial > PRE_HELLO_LINE) {
        const details = { bytes: gate.partial, limit: PRE_HELLO_LINE }
        return cutOff(client, defect(PedelecError.fromCode("MESSAGE_TOO_LARGE", "core", { details })))
      }
    }
    let messages: ReadonlyArray<FromClientEncoded>
    try {
      messages = parser.decode(data) as ReadonlyArray<FromClientEncoded>
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause)
      return cutOff(client, defect(protocolError(`an unreadable line: ${reason.slice(0, 200)}`)))
    }
    return Effect.forEach(
      messages,
      (message) =>
        message._tag === "Request"
          ? onRequest(shared, id, client, message)
          : message._tag === "Ack"
            ? Effect.void
            : CLIENT_MESSAGES.has(String((message as { _tag?: unknown })?._tag))
              ? shared.writeRequest(id, message)
              : // effect/rpc answers a line that is no client message of its with an uncoded Defect.
                closeWith(client, defect(protocolError("a line that is not an effect/rpc client message"))),
      { discard: true }
    )
  }

/**
 * Makes room by closing the connection that has waited longest for its hello: a client of ours says hello within
 * milliseconds of connecting, so a flood of new sockets evicts its own, not a legitimate client.
 */
const evictOldest = (shared: Shared) => {
  const oldest = shared.ungreeted.values().next().value
  if (oldest === undefined) return Effect.void
  shared.ungreeted.delete(oldest)
  const client = shared.clients.get(oldest)
  const refused = protocolError(`Core had ${MAX_UNGREETED} connections waiting for a hello; this one waited longest`)
  return client === undefined ? Effect.void : closeWith(client, defect(refused))
}

/** One connection, for as long as the socket is open and the gate has not closed it. */
const onSocket = Effect.fnUntraced(function* (shared: Shared, socket: Socket.Socket) {
  const id = shared.nextId++
  const parser = shared.serialization.makeUnsafe()
  // The writer in a scope of its own, so a connection cut off can end its writes while Core still reads.
  const writes = yield* Scope.fork(yield* Effect.scope)
  const writer = yield* Scope.provide(socket.writer, writes)
  // One write at a time waits for the socket to drain: the others wait here, each with its encoded line, rather
  // than as one more drain/error/close listener set on the socket each (100 sessions' streams on one connection,
  // unpaced by Acks, passed Node's 10 and it warned of a leak on Core's stderr).
  const draining = yield* Semaphore.make(1)
  const write = (response: FromServerEncoded) => {
    const encoded = parser.encode(response)
    return encoded === undefined ? Effect.void : draining.withPermits(1)(Effect.ignore(writer.write(encoded)))
  }
  if (shared.ungreeted.size >= MAX_UNGREETED) yield* evictOldest(shared)
  const gate: Gate = {
    greeted: false,
    partial: 0,
    hellos: new Set(),
    current: undefined,
    lingering: false,
    closed: yield* Deferred.make<void>()
  }
  const client: Client = { gate, write, endWrites: Scope.close(writes, Exit.void) }
  shared.ungreeted.add(id)
  shared.clients.set(id, client)
  yield* Effect.addFinalizer(() => {
    shared.clients.delete(id)
    shared.ungreeted.delete(id)
    return Queue.offer(shared.disconnects, id)
  })
  const late = protocolError(`no successful ${HELLO} within ${shared.helloTimeoutMs} ms`)
  // A hello that arrived and is being answered is a legitimate client on a busy Core: never cut it off.
  yield* Effect.forkScoped(
    Effect.andThen(Effect.sleep(shared.helloTimeoutMs), () =>
      gate.greeted || gate.hellos.size > 0 ? Effect.void : closeWith(client, defect(late))
    )
  )
  const read = onData(shared, id, client, parser)
  const reading = Effect.gen(function* () {
    const { pull } = yield* socket.reader
    while (true) {
      for (const data of yield* pull) yield* read(data)
    }
  }).pipe(Effect.catch(() => Effect.void))
  // Leaving this scope ends the socket gracefully (the writer's release), after what was written.
  const closed = Effect.andThen(Deferred.await(gate.closed), () =>
    gate.lingering ? Effect.sleep(LINGER_MS) : Effect.void
  )
  yield* Effect.raceFirst(reading, closed)
})

/** effect/rpc's answer on its way out: a hello's verdict, and a decode failure's Die made a coded failure. */
const send = (shared: Shared, clientId: number, response: FromServerEncoded): Effect.Effect<void> => {
  const client = shared.clients.get(clientId)
  if (client === undefined) return Effect.void
  const { gate, write } = client
  if (response._tag !== "Exit") return write(response)
  const requestId = String(response.requestId)
  const current = gate.current
  const coded =
    current !== undefined && String(current.id) === requestId && isDie(response)
      ? decodeFailure(shared, current)
      : undefined
  const answer = coded === undefined ? response : failed(requestId, coded)
  if (!gate.hellos.delete(requestId)) return write(answer)
  if (answer._tag === "Exit" && answer.exit._tag === "Success") {
    gate.greeted = true
    shared.ungreeted.delete(clientId)
    return write(answer)
  }
  return closeWith(client, answer)
}

/** The Protocol serving `requests` (a group's) over the SocketServer in context, gated as this file's header says. */
export const makeHelloGate = (requests: ReadonlyMap<string, Rpc.AnyWithProps>) =>
  Effect.gen(function* () {
    const serialization = yield* RpcSerialization.RpcSerialization
    const server = yield* SocketServer.SocketServer
    const { helloTimeoutMs } = yield* CoreConfig
    const shared: Shared = {
      requests,
      serialization,
      helloTimeoutMs,
      clients: new Map(),
      ungreeted: new Set(),
      disconnects: yield* Queue.make<number>(),
      decoders: new Map(),
      nextId: 0,
      writeRequest: () => Effect.void
    }
    const protocol = yield* RpcServer.Protocol.make((writeRequest) => {
      shared.writeRequest = writeRequest
      return Effect.succeed({
        disconnects: shared.disconnects,
        send: (clientId, response) => send(shared, clientId, response),
        end: () => Effect.void,
        clientIds: Effect.sync(() => new Set(shared.clients.keys())),
        initialMessage: Effect.succeedNone,
        // A stream's next chunk does not wait for the client's Ack of the last: a `tool_call` published right
        // after the call's status waited one host round trip behind it (~5 ms of each MCP tool call under load).
        // The socket's own backpressure (a write that waits for drain) still holds a stream a client cannot read.
        supportsAck: false,
        supportsTransferables: false,
        supportsSpanPropagation: true,
        supportsNotifications: true,
        codecFor: serialization.codecFor
      })
    })
    yield* Effect.forkScoped(server.run((socket) => Effect.scoped(onSocket(shared, socket))))
    return protocol
  })
