/**
 * Settings — default model per provider and default effort level; Ollama's base URL, API key (write-only: stored
 * as a secret, shown back only as "set"), timeout, a connection check and a model picker filled from the server.
 * Every field is checked with the contracts' schema as it is typed (SettingsForm.ts) and its problem shown at the
 * field; Save is refused while one remains, and Core decodes again (a refusal leaves settings.json as it was).
 * Leaving with unsaved edits asks first (Unsaved.ts). Storing is Core's, through the desktop role.
 */

import type { OllamaStatus } from "@pedelec/contracts/Desktop"
import type { ErrorCode } from "@pedelec/contracts/ErrorCode"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import { EFFORT_LEVELS, type ProviderInfo } from "@pedelec/contracts/Provider"
import type { PublicSettings } from "@pedelec/contracts/Settings"
import { useCallback, useMemo, useState } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { ErrorNote, Field, Loading, ScreenHeader, useLoad } from "../ui/Kit.tsx"
import { SaveBar, useUnsaved } from "../ui/SaveBar.tsx"
import { check, type Draft, draftOf, type FieldErrors, sameDraft, settingsOf } from "./SettingsForm.ts"

type Edit = (change: Partial<Draft>) => void

const input = (id: string, errors: FieldErrors) => ({
  id,
  "aria-invalid": errors[id] === undefined ? undefined : ("true" as const),
  "aria-describedby": errors[id] === undefined ? undefined : `${id}-error`
})

const Defaults = (props: {
  readonly draft: Draft
  readonly errors: FieldErrors
  readonly providers: ReadonlyArray<ProviderInfo>
  readonly edit: Edit
}) => (
  <section class="panel">
    <h2>Defaults</h2>
    <p class="hint">What a session gets when the page does not ask for something else.</p>
    <div class="field">
      <span class="label" id="effort-label">
        Default effort level
      </span>
      <div class="segmented" role="radiogroup" aria-labelledby="effort-label">
        {EFFORT_LEVELS.map((level) => (
          <label class={props.draft.defaultEffortLevel === level ? "on" : ""} key={level}>
            <input
              type="radio"
              name="effort"
              value={level}
              checked={props.draft.defaultEffortLevel === level}
              onChange={() => props.edit({ defaultEffortLevel: level })}
            />
            {level}
          </label>
        ))}
      </div>
    </div>
    <div class="grid-2">
      {props.providers
        .filter((provider) => provider.code !== "ollama")
        .map((provider) => (
          <Field
            label={`${provider.name} model`}
            id={`model-${provider.code}`}
            error={props.errors[`model-${provider.code}`]}
            key={provider.code}
          >
            <input
              {...input(`model-${provider.code}`, props.errors)}
              type="text"
              placeholder="The CLI's own default"
              value={props.draft.models[provider.code] ?? ""}
              onInput={(event) =>
                props.edit({ models: { ...props.draft.models, [provider.code]: event.currentTarget.value } })
              }
            />
          </Field>
        ))}
    </div>
  </section>
)

type CheckState =
  | { readonly state: "idle" }
  | { readonly state: "checking" }
  | { readonly state: "ok"; readonly status: OllamaStatus }
  | { readonly state: "failed"; readonly error: PedelecErrorWire }

/** What to do about a failed check, where the screen knows better than the code's own message. */
const todoFor = (code: ErrorCode): string | undefined => {
  switch (code) {
    case "OLLAMA_UNAVAILABLE":
      return "Start Ollama (ollama serve) or fix the base URL, then check again."
    case "OLLAMA_AUTH_FAILED":
      return "Enter the right API key for this server, then check again."
    case "OLLAMA_RESPONSE_INVALID":
      return "The base URL does not point at an Ollama server."
    default:
      return undefined
  }
}

const todoProp = (code: ErrorCode) => {
  const todo = todoFor(code)
  return todo === undefined ? {} : { todo }
}

const ConnectionCheck = (props: {
  readonly checked: CheckState
  readonly onCheck: () => void
  readonly disabled: boolean
}) => (
  <div class="check-row">
    <button
      type="button"
      class="button"
      onClick={props.onCheck}
      disabled={props.disabled || props.checked.state === "checking"}
    >
      {props.checked.state === "checking" ? "Checking…" : "Check connection"}
    </button>
    {props.checked.state === "ok" ? (
      <span class="check-ok" role="status">
        Connected · Ollama {props.checked.status.version ?? "(version unknown)"} · {props.checked.status.models.length}{" "}
        {props.checked.status.models.length === 1 ? "model" : "models"}
      </span>
    ) : null}
    {props.checked.state === "failed" ? (
      <ErrorNote error={props.checked.error} {...todoProp(props.checked.error.code)} />
    ) : null}
  </div>
)

const ModelPicker = (props: {
  readonly draft: Draft
  readonly errors: FieldErrors
  readonly checked: CheckState
  readonly edit: Edit
}) => {
  const models = props.checked.state === "ok" ? props.checked.status.models.map((model) => model.name) : undefined
  const choices =
    models === undefined
      ? []
      : [...new Set([...models, ...(props.draft.ollamaModel === "" ? [] : [props.draft.ollamaModel])])]
  return (
    <Field
      label="Default model"
      id="ollama-model"
      error={props.errors["ollama-model"]}
      hint={models === undefined ? "Check the connection to pick from the server's models." : "Models this server has."}
    >
      {models === undefined ? (
        <input
          {...input("ollama-model", props.errors)}
          type="text"
          placeholder="e.g. llama3.2"
          value={props.draft.ollamaModel}
          onInput={(event) => props.edit({ ollamaModel: event.currentTarget.value })}
        />
      ) : (
        <select
          {...input("ollama-model", props.errors)}
          value={props.draft.ollamaModel}
          onChange={(event) => props.edit({ ollamaModel: event.currentTarget.value })}
        >
          <option value="">None — sessions must name one</option>
          {choices.map((name) => (
            <option value={name} key={name}>
              {name}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
}

const Ollama = (props: {
  readonly draft: Draft
  readonly errors: FieldErrors
  readonly keySet: boolean
  readonly edit: Edit
}) => {
  const [checked, setChecked] = useState<CheckState>({ state: "idle" })
  const runCheck = async () => {
    setChecked({ state: "checking" })
    const apiKey = props.draft.apiKey
    const outcome = await call("desktop.ollama.check", {
      baseUrl: props.draft.baseUrl.trim(),
      ...(apiKey === "" ? {} : { apiKey })
    })
    setChecked(outcome.ok ? { state: "ok", status: outcome.value } : { state: "failed", error: outcome.error })
  }
  return (
    <section class="panel">
      <h2>Ollama</h2>
      <p class="hint">Pedelec's own agent loop talks to this server.</p>
      <div class="grid-2">
        <Field label="Base URL" id="ollama-url" error={props.errors["ollama-url"]}>
          <input
            {...input("ollama-url", props.errors)}
            type="url"
            value={props.draft.baseUrl}
            onInput={(event) => props.edit({ baseUrl: event.currentTarget.value })}
          />
        </Field>
        <Field
          label="Timeout (seconds)"
          id="ollama-timeout"
          error={props.errors["ollama-timeout"]}
          hint="How long one model call may take."
        >
          <input
            {...input("ollama-timeout", props.errors)}
            type="text"
            inputMode="numeric"
            value={props.draft.timeoutSeconds}
            onInput={(event) => props.edit({ timeoutSeconds: event.currentTarget.value })}
          />
        </Field>
        <Field
          label="API key"
          id="ollama-key"
          error={props.errors["ollama-key"]}
          hint={props.keySet ? "A key is stored. Type a new one to replace it." : "Only for servers that ask for one."}
        >
          <input
            {...input("ollama-key", props.errors)}
            type="password"
            autoComplete="off"
            placeholder={props.keySet ? "•••••••• (stored)" : "Not set"}
            value={props.draft.apiKey}
            onInput={(event) => props.edit({ apiKey: event.currentTarget.value })}
          />
        </Field>
        <ModelPicker draft={props.draft} errors={props.errors} checked={checked} edit={props.edit} />
      </div>
      <ConnectionCheck
        checked={checked}
        onCheck={() => void runCheck()}
        disabled={props.errors["ollama-url"] !== undefined}
      />
    </section>
  )
}

const save = async (settings: PublicSettings, draft: Draft) => {
  const stored = await call("desktop.settings.set", { settings: settingsOf(settings, draft) })
  if (!stored.ok || draft.apiKey === "") return stored
  return call("desktop.settings.set_secret", { name: "ollamaApiKey", value: draft.apiKey })
}

const Editor = (props: {
  readonly settings: PublicSettings
  readonly providers: ReadonlyArray<ProviderInfo>
  readonly onSaved: (settings: PublicSettings) => void
}) => {
  const saved = useMemo(() => draftOf(props.settings), [props.settings])
  const [draft, setDraft] = useState(saved)
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<PedelecErrorWire | undefined>(undefined)
  const errors = useMemo(() => check(draft), [draft])
  const dirty = !sameDraft(draft, saved)
  useUnsaved(dirty)
  const edit: Edit = (change) => setDraft((current) => ({ ...current, ...change }))
  const onSave = async () => {
    setSaving(true)
    const outcome = await save(props.settings, draft)
    setSaving(false)
    setError(outcome.ok ? undefined : outcome.error)
    if (outcome.ok) {
      setDraft(draftOf(outcome.value))
      props.onSaved(outcome.value)
    }
  }
  return (
    <form class="settings-form" onSubmit={(event) => event.preventDefault()}>
      {error === undefined ? null : (
        <ErrorNote error={error} todo="Nothing was changed. Fix the value and save again." />
      )}
      <Defaults draft={draft} errors={errors} providers={props.providers} edit={edit} />
      <Ollama draft={draft} errors={errors} keySet={props.settings.secretsSet.ollamaApiKey} edit={edit} />
      {dirty ? (
        <SaveBar
          invalid={Object.keys(errors).length > 0}
          saving={saving}
          onSave={() => void onSave()}
          onDiscard={() => setDraft(saved)}
        />
      ) : null}
    </form>
  )
}

export const Settings = () => {
  const loadSettings = useCallback(() => call("desktop.settings.get", {}), [])
  const loadProviders = useCallback(() => call("desktop.providers.list", { rescan: false }), [])
  const [settings, reload, setSettings] = useLoad(loadSettings)
  const [providers] = useLoad(loadProviders)
  return (
    <div class="screen" data-screen="settings">
      <ScreenHeader title="Settings" subtitle="Defaults for new sessions, and the Ollama server." />
      {settings.state === "loading" || providers.state === "loading" ? <Loading label="Reading settings…" /> : null}
      {settings.state === "failed" ? <ErrorNote error={settings.error} onRetry={() => void reload()} /> : null}
      {providers.state === "failed" ? <ErrorNote error={providers.error} /> : null}
      {settings.state === "ready" && providers.state === "ready" ? (
        <Editor settings={settings.value} providers={providers.value} onSaved={setSettings} />
      ) : null}
    </div>
  )
}
