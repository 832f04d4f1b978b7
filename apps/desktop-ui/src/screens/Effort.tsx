/**
 * Effort — per provider, what low / medium / high run: argv tokens (each checked by Core against the adapter's
 * allow-list as it is typed, a refused one shown at its field with Core's reason), an optional model, the command
 * line each level adds, and reset to the adapter's default. Saved into settings' `effortProfiles` through
 * `desktop.settings.set` (Core checks the allow-list again; a refusal leaves settings.json as it was). A provider
 * without an effort knob says so instead. The form as data is EffortForm.ts; storing is Core's.
 */
import type { EffortDescription, EffortPreview } from "@pedelec/contracts/Desktop"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { EFFORT_LEVELS, type EffortLevel, type ProviderCode } from "@pedelec/contracts/Provider"
import type { PublicSettings } from "@pedelec/contracts/Settings"
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { Badge, Empty, ErrorNote, Field, Loading, ScreenHeader, useLoad } from "../ui/Kit.tsx"
import { SaveBar, useUnsaved } from "../ui/SaveBar.tsx"
import { unsavedChanges } from "../ui/Unsaved.ts"
import {
  defaultLevel,
  type LevelDraft,
  modelProblem,
  type ProviderDraft,
  profileOf,
  providerDraft,
  sameDraft,
  settingsWith
} from "./EffortForm.ts"

type Checked =
  | { readonly state: "checking" }
  | { readonly state: "ok"; readonly preview: EffortPreview }
  | { readonly state: "refused"; readonly error: PedelecErrorWire }

type Checks = Partial<Record<EffortLevel, Checked>>

const CHECK_DELAY_MS = 200

const LEVEL_HINT: Readonly<Record<EffortLevel, string>> = {
  low: "Quick answers, least thinking.",
  medium: "The usual default.",
  high: "Most thinking, slowest."
}

/** Core's verdict on every level of the draft, asked again shortly after each edit (a late answer is dropped). */
const useChecks = (provider: ProviderCode, draft: ProviderDraft): Checks => {
  const [checks, setChecks] = useState<Checks>({})
  const round = useRef(0)
  useEffect(() => {
    const mine = ++round.current
    const timer = setTimeout(() => {
      for (const level of EFFORT_LEVELS) {
        const profile = profileOf(draft[level])
        void call("desktop.effort.check", { provider, level, profile }).then((outcome) => {
          if (round.current !== mine) return
          const checked: Checked = outcome.ok
            ? { state: "ok", preview: outcome.value }
            : { state: "refused", error: outcome.error }
          setChecks((current) => ({ ...current, [level]: checked }))
        })
      }
    }, CHECK_DELAY_MS)
    return () => clearTimeout(timer)
  }, [provider, draft])
  return checks
}

/**
 * Core's reason for a refused profile, which the field shows with what to do; other failures are shown by the card.
 * The allow-list itself is on the screen above the cards, so the field points there.
 */
const reasonOf = (checked: Checked | undefined) => {
  if (checked?.state !== "refused" || checked.error.code !== "EFFORT_LEVEL_INVALID") return undefined
  const reason = checked.error.details?.reason
  const said = typeof reason === "string" ? reason : checked.error.message
  return `${checked.error.code}: ${said}. Remove it, or use only arguments matching the patterns above.`
}

const Preview = (props: { readonly name: string; readonly checked: Checked | undefined }) => {
  const checked = props.checked
  if (checked === undefined || checked.state === "checking") return <p class="hint">Checking…</p>
  if (checked.state === "refused") return <p class="hint">No preview until Core accepts every token.</p>
  const line = checked.preview.commandLine
  return (
    <div class="effort-preview">
      <span class="label">Adds to {props.name}'s command line</span>
      <code class="preview-line">{line === "" ? "(nothing: the CLI's own default)" : line}</code>
      {checked.preview.env.length === 0 ? null : <code class="preview-line">{checked.preview.env.join(" ")}</code>}
    </div>
  )
}

const LevelCard = (props: {
  readonly description: EffortDescription
  readonly level: EffortLevel
  readonly draft: LevelDraft
  readonly checked: Checked | undefined
  readonly edit: (change: Partial<LevelDraft>) => void
  readonly reset: () => void
}) => {
  const { level, draft, checked } = props
  const argvId = `argv-${level}`
  const argvError = reasonOf(checked)
  const other = checked?.state === "refused" && argvError === undefined ? checked.error : undefined
  return (
    <section class="panel effort-level" data-level={level}>
      <div class="card-head">
        <h2>{level}</h2>
        <span class="grow" />
        {draft.isDefault ? <Badge tone="neutral">Default</Badge> : <Badge tone="info">Custom</Badge>}
      </div>
      <p class="hint">{LEVEL_HINT[level]}</p>
      <Field label="Extra arguments" id={argvId} error={argvError} hint="Separated by spaces.">
        <input
          id={argvId}
          type="text"
          class="mono"
          spellcheck={false}
          aria-invalid={argvError === undefined ? undefined : "true"}
          aria-describedby={argvError === undefined ? undefined : `${argvId}-error`}
          value={draft.argv}
          onInput={(event) => props.edit({ argv: event.currentTarget.value })}
        />
      </Field>
      <Field label="Model" id={`model-${level}`} error={modelProblem(draft)}>
        <input
          id={`model-${level}`}
          type="text"
          placeholder="The provider's default"
          value={draft.model}
          onInput={(event) => props.edit({ model: event.currentTarget.value })}
        />
      </Field>
      {other === undefined ? null : <ErrorNote error={other} />}
      <Preview name={props.description.name} checked={checked} />
      <div class="card-foot">
        <button type="button" class="button small" onClick={props.reset} disabled={draft.isDefault}>
          Reset to default
        </button>
      </div>
    </section>
  )
}

/** The allow-list's patterns without their anchors: what a user may type, as Core will check it. */
const AllowList = ({ description }: { readonly description: EffortDescription }) => (
  <p class="allow-list">
    {description.name} accepts only arguments matching{" "}
    {description.allowList.argv.map((pattern) => (
      <code class="chip" key={pattern}>
        {pattern.replace(/^\^/, "").replace(/\$$/, "")}
      </code>
    ))}
    {description.allowList.env.length === 0 ? null : (
      <span class="muted"> · environment: {description.allowList.env.join(", ")}</span>
    )}
  </p>
)

const NoKnob = ({ description }: { readonly description: EffortDescription }) => (
  <section class="panel" data-no-knob={description.provider}>
    <h2>{description.name} has no effort setting</h2>
    <p>
      Its CLI has no reasoning or effort switch, so low, medium and high all run it the same way.
      {description.effort.note === undefined ? null : ` ${description.effort.note}`}
    </p>
  </section>
)

const hasProblem = (draft: ProviderDraft, checks: Checks) =>
  EFFORT_LEVELS.some((level) => checks[level]?.state !== "ok" || modelProblem(draft[level]) !== undefined)

const ProviderEditor = (props: {
  readonly description: EffortDescription
  readonly settings: PublicSettings
  readonly onSaved: (settings: PublicSettings) => void
}) => {
  const { description } = props
  const saved = useMemo(() => providerDraft(description, props.settings), [description, props.settings])
  const [draft, setDraft] = useState(saved)
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<PedelecErrorWire | undefined>(undefined)
  const checks = useChecks(description.provider, draft)
  const dirty = !sameDraft(draft, saved)
  useUnsaved(dirty)
  const edit = (level: EffortLevel) => (change: Partial<LevelDraft>) =>
    setDraft((current) => ({ ...current, [level]: { ...current[level], ...change, isDefault: false } }))
  const reset = (level: EffortLevel) => () =>
    setDraft((current) => ({ ...current, [level]: defaultLevel(description, level) }))
  const onSave = async () => {
    setSaving(true)
    const outcome = await call("desktop.settings.set", { settings: settingsWith(props.settings, description, draft) })
    setSaving(false)
    setError(outcome.ok ? undefined : outcome.error)
    if (outcome.ok) props.onSaved(outcome.value)
  }
  return (
    <div class="effort-levels">
      {error === undefined ? null : (
        <ErrorNote error={error} todo="Nothing was saved. Fix the profile and save again." />
      )}
      <AllowList description={description} />
      <div class="effort-grid">
        {EFFORT_LEVELS.map((level) => (
          <LevelCard
            key={level}
            description={description}
            level={level}
            draft={draft[level]}
            checked={checks[level]}
            edit={edit(level)}
            reset={reset(level)}
          />
        ))}
      </div>
      {dirty ? (
        <SaveBar
          invalid={hasProblem(draft, checks)}
          saving={saving}
          onSave={() => void onSave()}
          onDiscard={() => setDraft(saved)}
        />
      ) : null}
    </div>
  )
}

const ProviderTabs = (props: {
  readonly descriptions: ReadonlyArray<EffortDescription>
  readonly chosen: ProviderCode
  readonly choose: (provider: ProviderCode) => void
}) => (
  <div class="tabs" role="tablist" aria-label="Provider">
    {props.descriptions.map((description) => (
      <button
        type="button"
        role="tab"
        key={description.provider}
        aria-selected={description.provider === props.chosen}
        class={description.provider === props.chosen ? "tab on" : "tab"}
        onClick={() => props.choose(description.provider)}
      >
        {description.name}
        {description.effort.supported ? null : <span class="muted"> · no knob</span>}
      </button>
    ))}
  </div>
)

const Profiles = (props: {
  readonly descriptions: ReadonlyArray<EffortDescription>
  readonly settings: PublicSettings
  readonly onSaved: (settings: PublicSettings) => void
}) => {
  const [chosen, setChosen] = useState<ProviderCode | undefined>(undefined)
  const first = props.descriptions.find((description) => description.effort.supported) ?? props.descriptions[0]
  const description = props.descriptions.find((each) => each.provider === chosen) ?? first
  if (description === undefined) {
    return <Empty title="No provider to configure">Core knows no provider it can run.</Empty>
  }
  const choose = (provider: ProviderCode) => {
    if (unsavedChanges.value && !window.confirm("Discard the unsaved changes to this provider's profiles?")) return
    setChosen(provider)
  }
  return (
    <>
      <ProviderTabs descriptions={props.descriptions} chosen={description.provider} choose={choose} />
      {description.effort.supported ? (
        <ProviderEditor
          key={description.provider}
          description={description}
          settings={props.settings}
          onSaved={props.onSaved}
        />
      ) : (
        <NoKnob description={description} />
      )}
    </>
  )
}

export const Effort = () => {
  const loadDescriptions = useCallback(() => call("desktop.effort.describe", {}), [])
  const loadSettings = useCallback(() => call("desktop.settings.get", {}), [])
  const [descriptions, reloadDescriptions] = useLoad(loadDescriptions)
  const [settings, reloadSettings, setSettings] = useLoad(loadSettings)
  const failed = descriptions.state === "failed" ? descriptions : settings.state === "failed" ? settings : undefined
  return (
    <div class="screen" data-screen="effort">
      <ScreenHeader
        title="Effort profiles"
        subtitle="What each effort level adds to a provider's command line. Only arguments the provider allows are accepted."
      />
      {descriptions.state === "loading" || settings.state === "loading" ? <Loading label="Reading profiles…" /> : null}
      {failed === undefined ? null : (
        <ErrorNote error={failed.error} onRetry={() => void Promise.all([reloadDescriptions(), reloadSettings()])} />
      )}
      {descriptions.state === "ready" && settings.state === "ready" ? (
        <Profiles descriptions={descriptions.value} settings={settings.value} onSaved={setSettings} />
      ) : null}
    </div>
  )
}
