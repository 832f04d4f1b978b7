/**
 * HealthNativeHost — About's native host part: per detected browser whether it can start Pedelec's native host
 * (registered / missing / stale, with why), Register for a missing one and Repair for a stale one, both answered by
 * main (`app.native_host.*`: host-registration writes the launcher and that browser's manifest). What counts as
 * stale is main's comparison, not this file's.
 */
import type { NativeHostBrowser, NativeHostRegistration, NativeHostStatus } from "@pedelec/contracts/link/DesktopLink"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { useCallback, useState } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { Badge, Empty, ErrorNote, Loading, type Tone, useLoad } from "../ui/Kit.tsx"

const NAMES: Readonly<Record<NativeHostBrowser, string>> = {
  chrome: "Google Chrome",
  chromium: "Chromium",
  edge: "Microsoft Edge",
  brave: "Brave"
}

const STATE: Readonly<Record<NativeHostRegistration["state"], { readonly tone: Tone; readonly label: string }>> = {
  registered: { tone: "ok", label: "Registered" },
  missing: { tone: "bad", label: "Missing" },
  stale: { tone: "warn", label: "Stale" }
}

const Row = (props: {
  readonly row: NativeHostRegistration
  readonly busy: boolean
  readonly onRegister: (browser: NativeHostBrowser) => void
}) => {
  const { row } = props
  const action = row.state === "missing" ? "Register" : row.state === "stale" ? "Repair" : undefined
  return (
    <tr data-browser={row.browser}>
      <td class="origin">{NAMES[row.browser]}</td>
      <td>
        <Badge tone={STATE[row.state].tone}>{STATE[row.state].label}</Badge>
      </td>
      <td class="wrap">
        <span class="mono small">{row.manifestFile}</span>
        {row.reason === undefined ? null : <span class="reason">{row.reason}</span>}
      </td>
      <td class="cell-actions">
        {action === undefined ? null : (
          <button
            type="button"
            class="button small primary"
            disabled={props.busy}
            onClick={() => props.onRegister(row.browser)}
          >
            {action}
          </button>
        )}
      </td>
    </tr>
  )
}

const Table = (props: {
  readonly status: NativeHostStatus
  readonly busy: boolean
  readonly onRegister: (browser: NativeHostBrowser) => void
}) =>
  props.status.browsers.length === 0 ? (
    <Empty title="No browser found">
      Pedelec looks for Chrome, Chromium, Edge and Brave in your user folder. Start one once, then come back.
    </Empty>
  ) : (
    <div class="table-wrap">
      <table class="native-host">
        <thead>
          <tr>
            <th>Browser</th>
            <th>Native host</th>
            <th>Manifest</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {props.status.browsers.map((row) => (
            <Row key={row.browser} row={row} busy={props.busy} onRegister={props.onRegister} />
          ))}
        </tbody>
      </table>
    </div>
  )

export const NativeHost = () => {
  const load = useCallback(() => call("app.native_host.status", {}), [])
  const [status, reload, setStatus] = useLoad(load)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<PedelecErrorWire | undefined>(undefined)
  const register = async (browser: NativeHostBrowser) => {
    setBusy(true)
    const outcome = await call("app.native_host.register", { browser })
    setBusy(false)
    setError(outcome.ok ? undefined : outcome.error)
    if (outcome.ok) setStatus(outcome.value)
  }
  return (
    <section class="panel" data-part="native-host">
      <div class="card-head">
        <h2>Browsers</h2>
        <span class="grow" />
        <button type="button" class="button small" onClick={() => void reload()}>
          Check again
        </button>
      </div>
      <p class="hint">
        A browser starts Pedelec through its native host, registered per browser. Pedelec registers it at each start; a
        stale one points at another install or a moved app.
      </p>
      {status.state === "loading" ? <Loading label="Reading registrations…" /> : null}
      {status.state === "failed" ? <ErrorNote error={status.error} onRetry={() => void reload()} /> : null}
      {error === undefined ? null : <ErrorNote error={error} />}
      {status.state === "ready" && !status.value.supported ? (
        <Empty title="Not on this system">Browsers on this system take no per-user native host.</Empty>
      ) : null}
      {status.state === "ready" && status.value.supported ? (
        <Table status={status.value} busy={busy} onRegister={(browser) => void register(browser)} />
      ) : null}
    </section>
  )
}
