/**
 * HealthSelfTest — About's self-test part: Run asks main (`app.self_test`) to run the hops it can without a browser,
 * against the running parts, and shows each as it came back: passed or failed, its latency, what came back, and for
 * a failed hop its `CODE: message` and what to do. The browser's hops need a Chromium this window cannot drive, so
 * their command stays here to copy. Which hops there are and how each is run is main's (SelfTest.ts).
 */
import { type SelfTestHop, SelfTestHopName } from "@pedelec/contracts/link/DesktopLink"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { useState } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { CopyButton, ErrorNote } from "../ui/Kit.tsx"

const SELF_TEST = "npm start -- --self-test"

type Run =
  | { readonly state: "idle" }
  | { readonly state: "running" }
  | { readonly state: "done"; readonly hops: ReadonlyArray<SelfTestHop> }
  | { readonly state: "failed"; readonly error: PedelecErrorWire }

const latency = (ms: number) => `${ms.toFixed(1)} ms`

const HopRow = ({ hop }: { readonly hop: SelfTestHop }) => {
  if (hop.ok) {
    return (
      <tr data-hop={hop.name} class="hop passed">
        <td class="mark" aria-label="passed">
          ✓
        </td>
        <td class="origin">{hop.name}</td>
        <td class="ms">{latency(hop.ms)}</td>
        <td class="wrap">{hop.detail}</td>
      </tr>
    )
  }
  if ("skipped" in hop) {
    return (
      <tr data-hop={hop.name} class="hop skipped">
        <td class="mark" aria-label="skipped">
          –
        </td>
        <td class="origin">{hop.name}</td>
        <td class="ms">—</td>
        <td class="wrap">{hop.detail}</td>
      </tr>
    )
  }
  return (
    <tr data-hop={hop.name} class="hop failed">
      <td class="mark" aria-label="failed">
        ✗
      </td>
      <td class="origin">{hop.name}</td>
      <td class="ms">{latency(hop.ms)}</td>
      <td class="wrap">
        <p class="hop-error">
          <code class="code">{hop.error.code}</code>: {hop.error.message}
        </p>
        <p class="todo">{hop.todo}</p>
      </td>
    </tr>
  )
}

/** While the hops run, their names in order: main answers once, when the last one is done. */
const Pending = () => (
  <>
    {SelfTestHopName.literals.map((name) => (
      <tr key={name} data-hop={name} class="hop pending">
        <td class="mark">
          <span class="spinner" aria-hidden="true" />
        </td>
        <td class="origin">{name}</td>
        <td class="ms">…</td>
        <td class="wrap muted">Waiting</td>
      </tr>
    ))}
  </>
)

const Summary = ({ hops }: { readonly hops: ReadonlyArray<SelfTestHop> }) => {
  const failed = hops.filter((hop) => !hop.ok && !("skipped" in hop)).length
  const total = hops.reduce((sum, hop) => sum + ("ms" in hop ? hop.ms : 0), 0)
  return failed === 0 ? (
    <p class="summary ok" role="status">
      All {hops.length} hops passed in {latency(total)}.
    </p>
  ) : (
    <p class="summary bad" role="status">
      {failed} of {hops.length} hops failed: what to do is in its row.
    </p>
  )
}

export const SelfTest = () => {
  const [run, setRun] = useState<Run>({ state: "idle" })
  const start = async () => {
    setRun({ state: "running" })
    const outcome = await call("app.self_test", {})
    setRun(outcome.ok ? { state: "done", hops: outcome.value } : { state: "failed", error: outcome.error })
  }
  return (
    <section class="panel" data-part="self-test">
      <div class="card-head">
        <h2>Self-test</h2>
        <span class="grow" />
        <button
          type="button"
          class="button small primary"
          disabled={run.state === "running"}
          onClick={() => void start()}
        >
          {run.state === "running" ? `Running… ${SelfTestHopName.literals.length} hops` : "Run self-test"}
        </button>
      </div>
      <p class="hint">
        Runs, against what runs now, each hop this app can reach without a browser: Core, the native host as your
        browser starts it, the providers Core found, and pedelec-cli as an agent runs it.
      </p>
      {run.state === "failed" ? <ErrorNote error={run.error} onRetry={() => void start()} /> : null}
      {run.state === "running" || run.state === "done" ? (
        <div class="table-wrap">
          <table class="self-test">
            <thead>
              <tr>
                <th />
                <th>Hop</th>
                <th class="ms">Latency</th>
                <th>What came back</th>
              </tr>
            </thead>
            <tbody>
              {run.state === "running" ? <Pending /> : run.hops.map((hop) => <HopRow key={hop.name} hop={hop} />)}
            </tbody>
          </table>
        </div>
      ) : null}
      {run.state === "done" ? <Summary hops={run.hops} /> : null}
      <p class="hint">
        The browser's hops (the extension, approval, a session's turn with a page tool) need a Chromium this window
        cannot drive: run them in a terminal in the Pedelec folder.
      </p>
      <div class="command">
        <code>{SELF_TEST}</code>
        <CopyButton text={SELF_TEST} />
      </div>
    </section>
  )
}
