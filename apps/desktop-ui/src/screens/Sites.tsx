/**
 * Sites — every origin that has full access or a live session, with the per-origin full-access opt-in (the only
 * place it can be set, through `desktop.origin.full_access`): what it allows said in words, and a confirm step before
 * it is turned on; off needs none. An origin can be added by typing it (checked with the contracts' Origin schema at
 * the field); it stays in the list only while the window is open unless full access is turned on for it. Which
 * origins may create sessions at all is the extension's question, not this screen's.
 */
import { Origin } from "@pedelec/contracts/Ids"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { useCallback, useState } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { Badge, Empty, ErrorNote, Field, Loading, ScreenHeader, useLoad } from "../ui/Kit.tsx"

interface Site {
  readonly origin: Origin
  readonly fullAccess: boolean
  readonly liveSessions: number
}

const sitesOf = (full: ReadonlyArray<Origin>, live: ReadonlyArray<Origin>, added: ReadonlyArray<Origin>) =>
  [...new Set([...full, ...live, ...added])].sort().map(
    (origin): Site => ({
      origin,
      fullAccess: full.includes(origin),
      liveSessions: live.filter((each) => each === origin).length
    })
  )

const ORIGIN_HINT =
  "An origin is a scheme and a host, with an optional port: https://example.com or http://localhost:3000"

/** The typed origin, or why it is not one; a trailing slash is forgiven, a path is not. */
const parseOrigin = (typed: string): Result.Result<Origin, string> => {
  const text = typed.trim().replace(/\/$/, "")
  if (text === "") return Result.fail("Type an origin first.")
  const decoded = Schema.decodeUnknownResult(Origin)(text)
  return Result.isSuccess(decoded) ? Result.succeed(decoded.success) : Result.fail(`Not an origin. ${ORIGIN_HINT}.`)
}

const AddOrigin = ({ onAdd }: { readonly onAdd: (origin: Origin) => void }) => {
  const [typed, setTyped] = useState("")
  const [error, setError] = useState<string | undefined>(undefined)
  const add = () => {
    const parsed = parseOrigin(typed)
    if (Result.isFailure(parsed)) return setError(parsed.failure)
    setError(undefined)
    setTyped("")
    onAdd(parsed.success)
  }
  return (
    <form
      class="panel add-origin"
      onSubmit={(event) => {
        event.preventDefault()
        add()
      }}
    >
      <Field label="Add a site" id="new-origin" error={error} hint={ORIGIN_HINT}>
        <div class="inline-row">
          <input
            id="new-origin"
            type="text"
            placeholder="https://example.com"
            spellcheck={false}
            aria-invalid={error === undefined ? undefined : "true"}
            aria-describedby={error === undefined ? undefined : "new-origin-error"}
            value={typed}
            onInput={(event) => {
              setTyped(event.currentTarget.value)
              setError(undefined)
            }}
          />
          <button type="submit" class="button">
            Add
          </button>
        </div>
      </Field>
    </form>
  )
}

const ConfirmFullAccess = (props: {
  readonly origin: Origin
  readonly busy: boolean
  readonly onCancel: () => void
  readonly onConfirm: () => void
}) => (
  <div class="scrim">
    <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="full-title">
      <h2 id="full-title">Give {props.origin} full access?</h2>
      <p>
        Agents this site starts will run <strong>without their CLI's sandbox</strong>: they can read, change and delete
        any file your user can, run any command and reach the network, without asking first.
      </p>
      <p>Any script on that site can start them. Turn it on only for a site you run yourself.</p>
      <p class="hint">
        Sessions already running keep the mode they started with. docs/PROVIDERS.md lists each CLI's flag for it.
      </p>
      <div class="actions">
        <button type="button" class="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="button danger-solid" onClick={props.onConfirm} disabled={props.busy}>
          {props.busy ? "Turning on…" : "Give full access"}
        </button>
      </div>
    </div>
  </div>
)

const SiteRow = (props: {
  readonly site: Site
  readonly busy: boolean
  readonly onAsk: (site: Site) => void
  readonly onOff: (site: Site) => void
}) => {
  const { site } = props
  return (
    <tr data-origin={site.origin}>
      <td class="origin">{site.origin}</td>
      <td>{site.liveSessions === 0 ? <span class="muted">none</span> : site.liveSessions}</td>
      <td>{site.fullAccess ? <Badge tone="warn">Full access</Badge> : <Badge tone="neutral">Sandboxed</Badge>}</td>
      <td class="cell-actions">
        {site.fullAccess ? (
          <button type="button" class="button small" disabled={props.busy} onClick={() => props.onOff(site)}>
            Turn off full access
          </button>
        ) : (
          <button type="button" class="button small" disabled={props.busy} onClick={() => props.onAsk(site)}>
            Allow full access…
          </button>
        )}
      </td>
    </tr>
  )
}

const SiteTable = (props: {
  readonly sites: ReadonlyArray<Site>
  readonly busy: boolean
  readonly onAsk: (site: Site) => void
  readonly onOff: (site: Site) => void
}) => (
  <div class="table-wrap">
    <table class="sites">
      <thead>
        <tr>
          <th>Site</th>
          <th>Live sessions</th>
          <th>Mode</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.sites.map((site) => (
          <SiteRow key={site.origin} site={site} busy={props.busy} onAsk={props.onAsk} onOff={props.onOff} />
        ))}
      </tbody>
    </table>
  </div>
)

const Explainer = () => (
  <section class="panel intro">
    <p>
      <strong>Sandboxed</strong> (the default): an agent works inside its session's workspace under its CLI's own
      sandbox or permission rules. <strong>Full access</strong>: the agent runs without them, as you.
    </p>
  </section>
)

const useFullAccess = (onSaved: () => Promise<void>) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<PedelecErrorWire | undefined>(undefined)
  const set = async (origin: Origin, enabled: boolean) => {
    setBusy(true)
    const outcome = await call("desktop.origin.full_access", { origin, enabled })
    setError(outcome.ok ? undefined : outcome.error)
    if (outcome.ok) await onSaved()
    setBusy(false)
    return outcome.ok
  }
  return { busy, error, set }
}

export const Sites = () => {
  const loadSettings = useCallback(() => call("desktop.settings.get", {}), [])
  const loadSessions = useCallback(() => call("desktop.session.list", {}), [])
  const [settings, reloadSettings] = useLoad(loadSettings)
  const [sessions, reloadSessions] = useLoad(loadSessions)
  const [added, setAdded] = useState<ReadonlyArray<Origin>>([])
  const [asking, setAsking] = useState<Site | undefined>(undefined)
  const reload = useCallback(
    () => Promise.all([reloadSettings(), reloadSessions()]).then(() => undefined),
    [reloadSettings, reloadSessions]
  )
  const access = useFullAccess(reload)
  const failed = settings.state === "failed" ? settings : sessions.state === "failed" ? sessions : undefined
  const ready = settings.state === "ready" && sessions.state === "ready"
  const sites = ready
    ? sitesOf(
        settings.value.fullAccessOrigins,
        sessions.value.map((session) => session.origin),
        added
      )
    : []
  const confirm = async () => {
    if (asking !== undefined && (await access.set(asking.origin, true))) setAsking(undefined)
  }
  return (
    <div class="screen" data-screen="sites">
      <ScreenHeader title="Sites" subtitle="Which sites may run agents without their sandbox." />
      <Explainer />
      {!ready && failed === undefined ? <Loading label="Reading sites…" /> : null}
      {failed === undefined ? null : <ErrorNote error={failed.error} onRetry={() => void reload()} />}
      {access.error === undefined ? null : (
        <ErrorNote error={access.error} todo="Nothing was changed. Try again once Core answers." />
      )}
      {ready && sites.length === 0 ? (
        <Empty title="No site has full access or a live session">
          Sites appear here when they start a session. Add one below to give it full access ahead of time.
        </Empty>
      ) : null}
      {sites.length > 0 ? (
        <SiteTable
          sites={sites}
          busy={access.busy}
          onAsk={setAsking}
          onOff={(site) => void access.set(site.origin, false)}
        />
      ) : null}
      {ready ? <AddOrigin onAdd={(origin) => setAdded((current) => [...current, origin])} /> : null}
      {asking === undefined ? null : (
        <ConfirmFullAccess
          origin={asking.origin}
          busy={access.busy}
          onCancel={() => setAsking(undefined)}
          onConfirm={() => void confirm()}
        />
      )}
    </div>
  )
}
