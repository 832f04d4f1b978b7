/**
 * Fuzzed native-host frames: the real built apps/native-host, started as Chrome starts it (stdio pipes, the
 * launcher's environment), fed 10,000 seeded Native Messaging frames — a correct length prefix before JSON of
 * random shapes (every host method with plausible or hostile params, wrong types, huge numbers, deep nesting,
 * wide objects), the same cut short or with invalid UTF-8, and noise — in batches through a few processes so the
 * run stays fast. After each batch a sentinel request must be answered (the port is still up). Expected: every
 * frame whose request id can be read is answered once, ok or with a contracts code, and the process never exits
 * until stdin closes (then with 0). Then a frame whose length prefix says 0xFFFFFFFF: the host cannot resynchronise
 * after it, so it must answer what it can and exit promptly, letting the browser reconnect (issue 14).
 */
import { HostMethods } from "@pedelec/contracts/link/HostLink"
import { removeHome, startHost, stopCore, tempHome } from "@pedelec/native-host/test/harness"
import { casesOf, faultSeed, hostileBytes, hostileValue, safeStringify } from "@pedelec/test-kit/faults/Hostile"
import { callOf, plausibleField } from "@pedelec/test-kit/faults/Plausible"
import fc from "fast-check"
import { expect, test } from "vitest"
import { contractsCodeOf, fuzzRow, record, tallier, type Verdict } from "./support/Probe.ts"

const CASES = 10_000
const PROCESSES = 4
const BATCH = 250
const seed = faultSeed()

const methods = Object.fromEntries(Object.entries(HostMethods).map(([name, method]) => [name, method.params]))

/** The request's fields as JSON text, its id first so that the host can read it even from a mangled frame. */
const request = fc
  .tuple(callOf(methods), plausibleField("origin"), fc.oneof(fc.constant("request"), hostileValue), fc.boolean())
  .map(([call, origin, kind, withOrigin]) => ({ kind, ...(withOrigin ? { origin } : {}), ...call }))
const body = hostileBytes(fc.oneof({ weight: 9, arbitrary: request }, { weight: 1, arbitrary: hostileValue }))

const header = (length: number) => {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32LE(length, 0)
  return bytes
}

/** The frame for case `index`: its id spliced in first when the body is a JSON object. */
const frameOf = (bytes: Buffer, index: number) => {
  const id = `f${index}`
  const text = bytes.toString("latin1")
  const withId = text.startsWith("{") ? Buffer.concat([Buffer.from(`{"id":"${id}",`), bytes.subarray(1)]) : bytes
  const answerable = withId.includes(`"id":"${id}"`)
  return { id, answerable, frame: Buffer.concat([header(withId.length), withId]) }
}

type Host = ReturnType<typeof startHost>

const verdictOf = (host: Host, id: string, answerable: boolean): Verdict => {
  const answers = host.messages.filter((message) => message.kind === "response" && message.id === id)
  if (!answerable) return { outcome: answers.length === 0 ? "unanswerable, dropped" : "answered anyway", ok: true }
  if (answers.length !== 1) return { outcome: `answered ${answers.length} times`, ok: false, note: id }
  const answer = answers[0]! as { readonly ok?: boolean; readonly error?: unknown }
  if (answer.ok === true) return { outcome: "ok", ok: true }
  const code = contractsCodeOf(answer.error)
  return code === undefined
    ? { outcome: "uncoded", ok: false, note: safeStringify(answer).slice(0, 200) }
    : { outcome: code, ok: true }
}

/** Feeds `cases` to one host in batches, each followed by a sentinel it must answer; then closes it. */
const feed = async (
  home: string,
  cases: ReadonlyArray<Buffer>,
  offset: number,
  add: (i: number, v: Verdict) => void
) => {
  const host = startHost(home)
  const frames = cases.map((bytes, i) => frameOf(bytes, offset + i))
  let alive = true
  for (let start = 0; start < frames.length && alive; start += BATCH) {
    for (const { frame } of frames.slice(start, start + BATCH)) host.writeRaw(frame)
    const sentinel = await host.request("extension.hello", {}).catch(() => undefined)
    alive = sentinel !== undefined && host.child.exitCode === null
  }
  // Calls that reached Core answer later than refusals, and not in the order sent (a provider look outlasts a
  // refusal from Core): wait for every one still unanswered, not only the last.
  const unanswered = new Set(frames.flatMap(({ id, answerable }) => (answerable ? [id] : [])))
  for (const message of host.messages) unanswered.delete(String(message.id))
  if (unanswered.size > 0)
    await host.next((m) => unanswered.delete(String(m.id)) && unanswered.size === 0, 20_000).catch(() => undefined)
  for (const [i, { id, answerable }] of frames.entries()) add(offset + i, verdictOf(host, id, answerable))
  const exit = await host.close()
  return { alive, exit: exit.code, stderr: host.stderr() }
}

test(`native-host frames: ${CASES} fuzzed frames through ${PROCESSES} real hosts, every readable id answered with a code (seed ${seed})`, async () => {
  const home = await tempHome()
  try {
    const cases = casesOf(body, seed, CASES)
    const { add, tally } = tallier()
    const per = Math.ceil(CASES / PROCESSES)
    const runs = []
    for (let p = 0; p < PROCESSES; p++) runs.push(await feed(home, cases.slice(p * per, (p + 1) * per), p * per, add))
    const down = runs.filter((run) => !run.alive || run.exit !== 0)
    const done = tally()
    const row = fuzzRow(
      "fuzz: native-host frames",
      done,
      seed,
      CASES,
      "every readable id answered once, coded; host up"
    )
    await record(
      { ...row, pass: row.pass && down.length === 0, figures: { processes: PROCESSES, hostsDown: down.length } },
      [...done.offenders, ...down.map((run) => `host down (exit ${run.exit}): ${run.stderr.slice(-300)}`)]
    )
    expect(done.offenders).toEqual([])
    expect(down.map((run) => run.exit)).toEqual([])
  } finally {
    await stopCore(home)
    await removeHome(home)
  }
})

test("native-host frames: a 0xFFFFFFFF length prefix — the host exits promptly instead of hanging", async () => {
  const home = await tempHome()
  try {
    const host = startHost(home)
    await host.request("extension.hello", {})
    const started = Date.now()
    host.writeRaw(Buffer.concat([header(0xffffffff), Buffer.from('{"id":"big","kind":"request"')]))
    const exited = await new Promise<boolean>((resolve) => {
      if (host.child.exitCode !== null) return resolve(true)
      const timer = setTimeout(() => resolve(false), 5_000)
      host.child.once("exit", () => {
        clearTimeout(timer)
        resolve(true)
      })
    })
    const ms = Date.now() - started
    const answer = host.messages.find((m) => m.id === "big") as
      | { readonly error?: { readonly code?: string } }
      | undefined
    if (!exited) host.child.kill("SIGKILL")
    const pass = exited && ms <= 5_000
    await record({
      probe: "native-host: bogus length prefix",
      trials: 1,
      expected: "exits ≤ 5 s (cannot resynchronise)",
      observed: `${exited ? `exited after ${ms} ms` : "still running after 5 s"}; answer ${answer?.error?.code ?? "none"}`,
      pass
    })
    expect(exited, "the host exits after a frame it cannot skip").toBe(true)
  } finally {
    await stopCore(home)
    await removeHome(home)
  }
})
