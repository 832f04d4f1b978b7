/**
 * Fuzzed page messages in the extension: the extension's page request decoder (apps/extension PageRequests, the
 * first code that touches what a web page posts) fed 10,000 seeded values — request envelopes whose params have
 * each method's fields with plausible or hostile values, and raw hostile values (deep, wide, wrong types). In-process
 * because the decoder is pure and the browser adds nothing but the structured clone. Expected: it never throws;
 * every refusal it answers carries a contracts code; a message it cannot answer (no usable id) is dropped.
 */

import { PageMethods } from "@pedelec/contracts/link/PageLink"
import { decodePageMessage } from "@pedelec/extension/src/page/PageRequests"
import { casesOf, faultSeed, hostileValue } from "@pedelec/test-kit/faults/Hostile"
import { callOf } from "@pedelec/test-kit/faults/Plausible"
import fc from "fast-check"
import { expect, test } from "vitest"
import { contractsCodeOf, fuzzRow, record, tallyCases, type Verdict } from "./support/Probe.ts"

const CASES = 10_000
const seed = faultSeed()

const methods = Object.fromEntries(Object.entries(PageMethods).map(([name, method]) => [name, method.params]))

const message = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(callOf(methods), fc.nat(), fc.oneof(fc.constant("request"), hostileValue))
      .map(([call, n, kind]) => ({ kind, id: `p${n}`, ...call }))
  },
  { weight: 2, arbitrary: hostileValue }
)

const verdictOf = (value: unknown): Verdict => {
  const decoded = decodePageMessage(value)
  if (decoded._tag === "Call") return { outcome: "decoded", ok: true }
  if (decoded._tag === "Dropped") return { outcome: "dropped (no id)", ok: true }
  const { response } = decoded
  if (response.ok) return { outcome: "answered ok", ok: true }
  const code = contractsCodeOf(response.error)
  return code === undefined
    ? { outcome: "uncoded", ok: false, note: JSON.stringify(response.error).slice(0, 200) }
    : { outcome: code, ok: true }
}

test(`page messages in the extension: ${CASES} fuzzed, never a throw, every refusal coded (seed ${seed})`, async () => {
  const tally = await tallyCases(casesOf(message, seed, CASES), verdictOf)
  const row = await record(
    fuzzRow("fuzz: extension page requests", tally, seed, 10_000, "0 throws, every refusal a contracts code"),
    tally.offenders
  )
  expect(tally.offenders).toEqual([])
  expect(row.pass).toBe(true)
})
