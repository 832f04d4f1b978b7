/**
 * Sites — every origin that has full access, a policy or a live session, with the per-origin full-access opt-in (the
 * only place it can be set, through `desktop.origin.full_access`): what it allows said in words, and a confirm step
 * before it is turned on; off needs none. Each site's policy is shown and edited here too (SitePolicy). An origin can
 * be added by typing it (checked with the contracts' Origin schema at the field); it stays in the list only while the
 * window is open unless something is set for it. Which origins may create sessions at all is the extension's
 * question, not this screen's.
 */
import { Origin } from "@pedelec/contracts/Ids"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { DEFAULT_SITE_POLICY, policySummary, type SitePolicies, type SitePolicy } from "@pedelec/contracts/SitePolicy"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { useCallback, useState } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { Badge, Empty, ErrorNote, Field, Loading, ScreenHeader, useLoad } from "../ui/Kit.tsx"
import { PolicyDialog, type ProviderChoice } from "./SitePolicy.tsx"

interface Site {
  readonly origin: Origin
  readonly fullAccess: boolean
  readonly liveSessions: number
  readonly policy: SitePolicy
}

interface Known {
  readonly full: ReadonlyArray<Origin>
  readonly live: ReadonlyArray<Origin>
  readonly policies: SitePolicies
  readonly added: ReadonlyArray<Origin>
}

const sitesOf = ({ full, live, policies, added }: Known) =>
  [...new Set([...full, ...live, ...(Object.keys(policies) as Array<Origin>), ...added])].sort().map(
    (origin): Site => ({
      origin,
      fullAccess: full.includes(origin),
      liveSessions: live.filter((each) => each === origin).length,
      policy: policies[origin] ?? DEFAULT_SITE_POLICY
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

interface RowActions {
  readonly busy: boolean
  readonly names: ReadonlyMap<string, string>
  readonly onAsk: (site: Site) => void
  readonly onOff: (site: Site) => void
  readonly onPolicy: (site: Site) => void
}

const SiteRow = (props: RowActions & { readonly site: Site }) => {
  const { site } = props
  return (
    <tr data-origin={site.origin}>
      <td class="origin">{site.origin}</td>
      <td>{site.liveSessions === 0 ? <span class="muted">none</span> : site.liveSessions}</td>
      <td>{site.fullAccess ? <Badge tone="warn">Full access</Badge> : <Badge tone="neutral">Sandboxed</Badge>}</td>
      <td class="policy">
        <span class="policy-summary">{policySummary(site.policy, (code) => props.names.get(code) ?? code)}</span>
        <button type="button" class="button small" onClick={() => props.onPolicy(site)}>
          Edit policy…
        </button>
      </td>
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

const SiteTable = ({ sites, ...actions }: RowActions & { readonly sites: ReadonlyArray<Site> }) => (
  <div class="table-wrap">
    <table class="sites">
      <thead>
        <tr>
          <th>Site</th>
          <th>Live sessions</th>
          <th>Mode</th>
          <th>Policy</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {sites.map((site) => (
          <SiteRow key={site.origin} site={site} {...actions} />
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
    <p>
      A site's <strong>policy</strong> says which providers its sessions may run, whether it may ask for a folder of
      this computer, and how many sessions it may hold at once. The extension's options page sets the same policy.
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

/** Everything the screen reads from Core, loaded together; `reload` after any change. */
const useSitesData = () => {
  const loadSettings = useCallback(() => call("desktop.settings.get", {}), [])
  const loadSessions = useCallback(() => call("desktop.session.list", {}), [])
  const loadPolicies = useCallback(() => call("desktop.origin.policies", {}), [])
  const loadProviders = useCallback(() => call("desktop.providers.list", { rescan: false }), [])
  const [settings, reloadSettings] = useLoad(loadSettings)
  const [sessions, reloadSessions] = useLoad(loadSessions)
  const [policies, reloadPolicies] = useLoad(loadPolicies)
  const [providers] = useLoad(loadProviders)
  const reload = useCallback(
    () => Promise.all([reloadSettings(), reloadSessions(), reloadPolicies()]).then(() => undefined),
    [reloadSettings, reloadSessions, reloadPolicies]
  )
  const all = [settings, sessions, policies, providers] as const
  const failed = all.find((loaded) => loaded.state === "failed")
  const ready =
    settings.state === "ready" &&
    sessions.state === "ready" &&
    policies.state === "ready" &&
    providers.state === "ready"
      ? {
          known: {
            full: settings.value.fullAccessOrigins,
            live: sessions.value.map((session) => session.origin),
            policies: policies.value
          },
          providers: providers.value.map(({ code, name }): ProviderChoice => ({ code, name }))
        }
      : undefined
  return { ready, failed: failed?.state === "failed" ? failed : undefined, reload }
}

export const Sites = () => {
  const data = useSitesData()
  const [added, setAdded] = useState<ReadonlyArray<Origin>>([])
  const [asking, setAsking] = useState<Site | undefined>(undefined)
  const [editing, setEditing] = useState<Site | undefined>(undefined)
  const access = useFullAccess(data.reload)
  const { ready, failed } = data
  const sites = ready === undefined ? [] : sitesOf({ ...ready.known, added })
  const names = new Map((ready?.providers ?? []).map(({ code, name }) => [code, name] as const))
  const confirm = async () => {
    if (asking !== undefined && (await access.set(asking.origin, true))) setAsking(undefined)
  }
  return (
    <div class="screen" data-screen="sites">
      <ScreenHeader
        title="Sites"
        subtitle="Which sites may run agents without their sandbox, and what each may ask for."
      />
      <Explainer />
      {ready === undefined && failed === undefined ? <Loading label="Reading sites…" /> : null}
      {failed === undefined ? null : <ErrorNote error={failed.error} onRetry={() => void data.reload()} />}
      {access.error === undefined ? null : (
        <ErrorNote error={access.error} todo="Nothing was changed. Try again once Core answers." />
      )}
      {ready !== undefined && sites.length === 0 ? (
        <Empty title="No site has full access, a policy or a live session">
          Sites appear here when they start a session. Add one below to set its policy or full access ahead of time.
        </Empty>
      ) : null}
      {sites.length > 0 ? (
        <SiteTable
          sites={sites}
          busy={access.busy}
          names={names}
          onAsk={setAsking}
          onOff={(site) => void access.set(site.origin, false)}
          onPolicy={setEditing}
        />
      ) : null}
      {ready === undefined ? null : <AddOrigin onAdd={(origin) => setAdded((current) => [...current, origin])} />}
      {asking === undefined ? null : (
        <ConfirmFullAccess
          origin={asking.origin}
          busy={access.busy}
          onCancel={() => setAsking(undefined)}
          onConfirm={() => void confirm()}
        />
      )}
      {editing === undefined || ready === undefined ? null : (
        <PolicyDialog
          origin={editing.origin}
          policy={editing.policy}
          providers={ready.providers}
          onCancel={() => setEditing(undefined)}
          onSaved={() => data.reload().then(() => setEditing(undefined))}
        />
      )}
    </div>
  )
}
