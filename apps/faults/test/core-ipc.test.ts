/**
 * Fuzzed Core IPC, both roles: a real built Core, reached over its real socket by a hand-written client
 * (test-kit RawIpc) that says a valid hello and then sends 10,000 seeded requests per role — every host-role and
 * desktop-role RPC tag with payloads of the method's fields holding plausible or hostile values, and unknown tags —
 * pipelined over several connections; then requests without the launch secret or with a wrong one, a connection
 * each (Core may close a connection that failed its proof, taking what was pipelined behind it); then garbage
 * lines (not JSON, JSON that is no request, invalid UTF-8, deep nesting). Expected: every request answered, with a
 * success, a stream, or a failure whose code is a contracts code — never a `Die` or a connection `Defect` (bad input
 * is a failure with a code, issue 14) — and Core alive and answering a fresh client at the end.
 */
import { HelloRpcs, HostRpcs } from "@pedelec/contracts/node/CoreLink"
import { DesktopRpcs } from "@pedelec/contracts/node/DesktopRole"
import { PROTOCOL_VERSION } from "@pedelec/contracts/Protocol"
import { removeHome, startCore, stopCore } from "@pedelec/test-kit/core/Harness"
import { casesOf, faultSeed, hostileBytes, hostileValue, safeStringify } from "@pedelec/test-kit/faults/Hostile"
import { paramsFor } from "@pedelec/test-kit/faults/Plausible"
import { failureOfExit, proofOf, type RawConnection, rawConnect } from "@pedelec/test-kit/faults/RawIpc"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { contractsCodeOf, fuzzRow, record, tallier, type Verdict } from "./support/Probe.ts"

const CASES = 10_000
const PER_CONNECTION = 1_000
const IN_FLIGHT = 50
const GARBAGE = 500
const seed = faultSeed()

let core: Awaited<ReturnType<typeof startCore>>
beforeAll(async () => {
  core = await startCore()
})
afterAll(async () => {
  await stopCore(core)
  await removeHome(core.home)
})

const rpcsOf = (group: { readonly requests: ReadonlyMap<string, { readonly payloadSchema: unknown }> }) =>
  [...group.requests.entries()].map(([tag, rpc]) => [tag, rpc.payloadSchema] as const)

interface Case {
  readonly tag: string
  readonly payload: unknown
}

const caseOf = (rpcs: ReadonlyArray<readonly [string, unknown]>): fc.Arbitrary<Case> =>
  fc.record({
    tag: fc.oneof(
      { weight: 19, arbitrary: fc.constantFrom(...rpcs.map(([tag]) => tag)) },
      { weight: 1, arbitrary: fc.constantFrom("nope", "agent.tool_call", "") }
    ),
    payload: fc.oneof(...rpcs.map(([, schema]) => paramsFor(schema)), hostileValue)
  })

const hello = async (connection: RawConnection) => {
  connection.request("hello", "core.hello", { protocolVersion: PROTOCOL_VERSION, component: "cli", version: "faults" })
  return connection.answer("hello")
}

const verdictOf = (connection: RawConnection, answer: Awaited<ReturnType<RawConnection["answer"]>>, id: string) => {
  if (answer === undefined)
    return { outcome: connection.closed() ? "closed unanswered" : "silent", ok: false, note: id }
  if (answer._tag === "Chunk") {
    connection.interrupt(id)
    return { outcome: "stream", ok: true }
  }
  const failure = failureOfExit(answer.exit)
  if (failure._tag === "Success") return { outcome: "success", ok: true }
  if (failure._tag === "Die") return { outcome: "Die", ok: false, note: safeStringify(failure.defect).slice(0, 160) }
  const code = contractsCodeOf(failure.error)
  return code === undefined
    ? { outcome: "uncoded failure", ok: false, note: safeStringify(failure.error).slice(0, 160) }
    : { outcome: code, ok: true }
}

/** One connection's share: hello, then its cases `IN_FLIGHT` at a time, each answer checked. */
const runConnection = async (cases: ReadonlyArray<Case>, offset: number, add: (i: number, v: Verdict) => void) => {
  const connection = await rawConnect(core.info.socketPath, core.info.launchSecret)
  const welcomed = await hello(connection)
  for (let start = 0; start < cases.length; start += IN_FLIGHT) {
    const batch = cases.slice(start, start + IN_FLIGHT).map((item, i) => ({ ...item, id: `${offset + start + i}` }))
    for (const { id, tag, payload } of batch) connection.request(id, tag, payload)
    const answers = await Promise.all(batch.map(({ id }) => connection.answer(id)))
    for (const [i, answer] of answers.entries()) add(offset + start + i, verdictOf(connection, answer, batch[i]!.id))
  }
  const defects = [...connection.defects]
  connection.close()
  return { welcomed: welcomed !== undefined, defects }
}

const stillServes = async () => {
  const fresh = await rawConnect(core.info.socketPath, core.info.launchSecret)
  const answer = await hello(fresh)
  fresh.close()
  return answer !== undefined && failureOfExit((answer as { exit: unknown }).exit)._tag === "Success"
}

describe(`Core IPC, ${CASES} fuzzed requests per role (seed ${seed})`, () => {
  test.each([
    ["host", rpcsOf(HostRpcs)],
    ["desktop", rpcsOf(DesktopRpcs)]
  ] as const)("%s role", async (role, rpcs) => {
    const cases = casesOf(caseOf(rpcs), seed, CASES)
    const { add, tally } = tallier()
    const defects: Array<unknown> = []
    for (let start = 0; start < cases.length; start += PER_CONNECTION) {
      const run = await runConnection(cases.slice(start, start + PER_CONNECTION), start, add)
      defects.push(...run.defects)
    }
    const alive = await stillServes()
    const done = tally()
    const row = fuzzRow(`fuzz: Core IPC, ${role} role`, done, seed, CASES, "each answered: success or a contracts code")
    await record(
      {
        ...row,
        pass: row.pass && alive && defects.length === 0,
        figures: { defects: defects.length, coreAlive: String(alive) }
      },
      [...done.offenders, ...defects.slice(0, 2).map((defect) => `Defect ${safeStringify(defect).slice(0, 160)}`)]
    )
    expect(done.offenders).toEqual([])
    expect(defects).toEqual([])
    expect(alive).toBe(true)
  })
})

const PROOFLESS = 200
const WRONG_PROOFS: ReadonlyArray<ReadonlyArray<[string, string]>> = [
  [],
  proofOf("A".repeat(43)),
  [["x-pedelec-session-cap", "B".repeat(43)]]
]

test(`Core IPC: ${PROOFLESS} requests without a valid proof, and hostile hellos — refused or closed, Core alive (seed ${seed})`, async () => {
  const rpcs = [...rpcsOf(HostRpcs), ...rpcsOf(DesktopRpcs), ...rpcsOf(HelloRpcs)]
  const cases = casesOf(fc.tuple(caseOf(rpcs), fc.nat()), seed, PROOFLESS)
  const { add, tally } = tallier()
  for (const [i, [{ tag, payload }, pick]] of cases.entries()) {
    const connection = await rawConnect(core.info.socketPath, core.info.launchSecret)
    await hello(connection)
    connection.request("p", tag, payload, WRONG_PROOFS[pick % WRONG_PROOFS.length]!)
    const answer = await connection.answer("p", 5_000)
    const verdict = verdictOf(connection, answer, "p")
    // Refused by any code (a payload may be decoded before the proof is checked), or the connection closed.
    const refused = verdict.ok
      ? verdict.outcome !== "success" && verdict.outcome !== "stream"
      : verdict.outcome === "closed unanswered"
    add(i, refused ? { ...verdict, ok: true } : { ...verdict, ok: false, note: `${tag} answered ${verdict.outcome}` })
    connection.close()
  }
  const alive = await stillServes()
  const done = tally()
  const row = fuzzRow("fuzz: Core IPC, no/wrong proof, bad hello", done, seed, PROOFLESS, "coded refusal or closed")
  await record({ ...row, pass: row.pass && alive, figures: { coreAlive: String(alive) } }, done.offenders)
  expect(done.offenders).toEqual([])
  expect(alive).toBe(true)
})

test(`Core IPC: ${GARBAGE} garbage lines after a hello — no uncoded Defect, Core alive (seed ${seed})`, async () => {
  const lines = casesOf(hostileBytes(hostileValue), seed, GARBAGE)
  const { add, tally } = tallier()
  for (const [i, line] of lines.entries()) {
    const connection = await rawConnect(core.info.socketPath, core.info.launchSecret)
    await hello(connection)
    connection.line(line)
    connection.request("after", "settings.get", undefined)
    const answer = await connection.answer("after", 2_000)
    const uncoded = connection.defects.filter((defect) => contractsCodeOf(defect) === undefined)
    const outcome = connection.closed() ? "closed" : answer === undefined ? "silent" : "still answering"
    add(
      i,
      uncoded.length === 0
        ? { outcome, ok: outcome !== "silent" }
        : { outcome: "uncoded Defect", ok: false, note: safeStringify(uncoded[0]).slice(0, 160) }
    )
    connection.close()
  }
  const alive = await stillServes()
  const done = tally()
  const row = fuzzRow("fuzz: Core IPC, garbage lines", done, seed, GARBAGE, "closed or answering, no uncoded Defect")
  await record({ ...row, pass: row.pass && alive, figures: { coreAlive: String(alive) } }, done.offenders)
  expect(done.offenders).toEqual([])
  expect(alive).toBe(true)
})
