/**
 * PagePort — a page port against the worker's real services over a fake browser (FakeChromeApi), for the tests that
 * drive one: the origins and sessions they use, connecting, the page's requests, and what reached the page and the
 * native host.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import * as Effect from "effect/Effect"
import { Grants } from "../src/approval/Grants.ts"
import { Chrome } from "../src/browser/Chrome.ts"
import { PagePorts } from "../src/page/PagePorts.ts"
import { PortMailbox } from "../src/page/PortMailbox.ts"
import { type WorkerServices, workerLayer } from "../src/WorkerLayer.ts"
import { FakeChromeApi, type FakeWorkerPort, waitUntil } from "./FakeChromeApi.ts"

export const A = "https://a.example" as Origin
export const B = "http://127.0.0.1:4321" as Origin
export const SESSION = "sessionAAAAAAAAAAAAAAAAA"
export const OTHER_SESSION = "sessionBBBBBBBBBBBBBBBBB"

export const sessionInfo = (sessionId: string, origin: string) => ({
  sessionId,
  origin,
  provider: "codex",
  model: null,
  effortLevel: "medium",
  workspace: { path: `/tmp/pedelec/${sessionId}`, managed: true },
  status: "idle",
  autoEndOnDisconnect: true,
  lastSeq: 0,
  createdAt: 1
})
export const chat = (sessionId: string, seq: number) => ({
  type: "chat",
  sessionId,
  seq,
  at: 5,
  turnId: "turn-0001",
  text: `hello ${seq}`
})

export type Posted = Record<string, unknown> & { kind: string; id?: string; ok?: boolean; error?: { code: string } }

export const run = <A, E>(body: (fake: FakeChromeApi) => Effect.Effect<A, E, WorkerServices>) => {
  const fake = new FakeChromeApi()
  return body(fake).pipe(Effect.provide(workerLayer(Chrome.layerWith(fake))))
}

/** A page connects; messages it sends before the worker is ready must not be lost (P4). */
export const connect = (fake: FakeChromeApi, origin: string, early: ReadonlyArray<unknown> = []) =>
  Effect.gen(function* () {
    const port = fake.page(origin)
    const mailbox = new PortMailbox(port)
    for (const message of early) port.emit(message)
    yield* PagePorts.use((ports) => ports.attach(mailbox))
    return port
  })

export const request = (id: string, method: string, params: unknown = {}) => ({ kind: "request", id, method, params })
export const posted = (port: FakeWorkerPort) => port.posted as Array<Posted>
export const responseTo = (port: FakeWorkerPort, id: string) =>
  Effect.gen(function* () {
    yield* waitUntil(() => posted(port).some((m) => m.kind === "response" && m.id === id), `a response to ${id}`)
    return posted(port).find((m) => m.kind === "response" && m.id === id)!
  })
export const hostRequests = (native: FakeWorkerPort) =>
  native.posted as Array<{
    kind: string
    id: string
    origin?: string
    method: string
    params: Record<string, unknown>
    textRefs?: true
  }>
export const lastHostRequest = (native: FakeWorkerPort, method: string) =>
  Effect.gen(function* () {
    yield* waitUntil(() => hostRequests(native).some((r) => r.method === method), `a ${method} to the host`)
    return [...hostRequests(native)].reverse().find((r) => r.method === method)!
  })
export const approve = (origin: Origin) => Grants.use((grants) => grants.approve(origin))
/** The `count`th `session.resume` this native port carried. */
export const waitUntilResume = (native: FakeWorkerPort, count: number) =>
  Effect.gen(function* () {
    const resumes = () => hostRequests(native).filter((r) => r.method === "session.resume")
    yield* waitUntil(() => resumes().length >= count, `resume #${count}`)
    return resumes()[count - 1]!
  })

/** A page subscribed to SESSION on an approved origin (reading PageTextRefs if it says so), with its native link. */
export const subscribedPage = Effect.fnUntraced(function* (fake: FakeChromeApi, textRefs = false) {
  yield* approve(A)
  const page = yield* connect(fake, A)
  const subscribe = request("sub", "session.subscribe", { sessionId: SESSION, afterSeq: 0 })
  page.emit(textRefs ? { ...subscribe, textRefs } : subscribe)
  yield* waitUntil(() => fake.nativePorts.length === 1, "the native link")
  const native = fake.nativePorts[0]!
  const forwarded = yield* lastHostRequest(native, "session.subscribe")
  native.emit({ kind: "response", id: forwarded.id, ok: true, result: {} })
  yield* responseTo(page, "sub")
  return { page, native, subscription: forwarded.id, asked: forwarded.textRefs }
})
