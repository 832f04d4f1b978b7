/**
 * SitePolicy — a site's policy on the Sites screen: what it allows in words, and the dialog that edits it (the
 * providers its sessions may run, whether it may ask for a folder of this computer, at most how many live sessions),
 * saved with `desktop.origin.set_policy`. It is the same policy the extension's options page sets: Core keeps and
 * enforces it, and the extension follows Core's copy. The form is checked with the contracts' SitePolicy schema
 * before it is sent, each problem shown at its field. Which sites are listed, and full access, are Sites'.
 */
import type { Origin } from "@pedelec/contracts/Ids"
import type { PedelecErrorWire } from "@pedelec/contracts/PedelecError"
import type { ProviderCode } from "@pedelec/contracts/Provider"
import { SitePolicy } from "@pedelec/contracts/SitePolicy"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { useState } from "preact/hooks"
import { call } from "../bridge/Desktop.ts"
import { ErrorNote, Field } from "../ui/Kit.tsx"

export interface ProviderChoice {
  readonly code: ProviderCode
  readonly name: string
}

interface Draft {
  readonly anyProvider: boolean
  readonly chosen: ReadonlySet<ProviderCode>
  readonly paths: boolean
  readonly max: string
}

type Problem = { readonly field: "providers" | "max"; readonly message: string }

const draftOf = (policy: SitePolicy): Draft => ({
  anyProvider: policy.allowedProviders === undefined,
  chosen: new Set(policy.allowedProviders ?? []),
  paths: policy.allowWorkspacePaths,
  max: policy.maxLiveSessions === undefined ? "" : String(policy.maxLiveSessions)
})

/** The policy the form says, or the first field to fix and how. */
const policyOf = (draft: Draft): Result.Result<SitePolicy, Problem> => {
  if (!draft.anyProvider && draft.chosen.size === 0) {
    return Result.fail({
      field: "providers",
      message: "Choose at least one provider, or allow any. To stop a site altogether, revoke it in the extension."
    })
  }
  const max = draft.max.trim()
  const candidate = {
    ...(draft.anyProvider ? {} : { allowedProviders: [...draft.chosen].sort() }),
    allowWorkspacePaths: draft.paths,
    ...(max === "" ? {} : { maxLiveSessions: /^\d+$/.test(max) ? Number(max) : Number.NaN })
  }
  const decoded = Schema.decodeUnknownResult(SitePolicy)(candidate)
  return Result.isSuccess(decoded)
    ? Result.succeed(decoded.success)
    : Result.fail({ field: "max", message: "Type a whole number from 1 to 1000, or leave it empty for no limit." })
}

const ProviderBoxes = (props: {
  readonly providers: ReadonlyArray<ProviderChoice>
  readonly draft: Draft
  readonly onChange: (draft: Draft) => void
}) => {
  const { draft } = props
  const toggle = (code: ProviderCode, on: boolean) => {
    const chosen = new Set(draft.chosen)
    if (on) chosen.add(code)
    else chosen.delete(code)
    props.onChange({ ...draft, chosen })
  }
  return (
    <div class="checks" id="policy-providers">
      <label class="check">
        <input
          type="checkbox"
          name="any-provider"
          checked={draft.anyProvider}
          onChange={(event) => props.onChange({ ...draft, anyProvider: event.currentTarget.checked })}
        />
        Any provider
      </label>
      {props.providers.map((provider) => (
        <label class="check" key={provider.code}>
          <input
            type="checkbox"
            name="provider"
            value={provider.code}
            disabled={draft.anyProvider}
            checked={draft.anyProvider || draft.chosen.has(provider.code)}
            onChange={(event) => toggle(provider.code, event.currentTarget.checked)}
          />
          {provider.name}
        </label>
      ))}
    </div>
  )
}

export const PolicyDialog = (props: {
  readonly origin: Origin
  readonly policy: SitePolicy
  readonly providers: ReadonlyArray<ProviderChoice>
  readonly onCancel: () => void
  readonly onSaved: () => Promise<void>
}) => {
  const [draft, setDraft] = useState(() => draftOf(props.policy))
  const [problem, setProblem] = useState<Problem | undefined>(undefined)
  const [failure, setFailure] = useState<PedelecErrorWire | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const edit = (next: Draft) => {
    setDraft(next)
    setProblem(undefined)
  }
  const save = async () => {
    const checked = policyOf(draft)
    if (Result.isFailure(checked)) return setProblem(checked.failure)
    setBusy(true)
    const outcome = await call("desktop.origin.set_policy", { origin: props.origin, policy: checked.success })
    setBusy(false)
    if (!outcome.ok) return setFailure(outcome.error)
    await props.onSaved()
  }
  const at = (field: Problem["field"]) => (problem?.field === field ? problem.message : undefined)
  return (
    <div class="scrim">
      <div class="dialog wide" role="dialog" aria-modal="true" aria-labelledby="policy-title">
        <form
          class="policy-form"
          onSubmit={(event) => {
            event.preventDefault()
            void save()
          }}
        >
          <h2 id="policy-title">What {props.origin} may ask for</h2>
          <p class="hint">Holds from the site's next session on; sessions already running keep going.</p>
          <Field label="Providers its sessions may run" id="policy-providers" error={at("providers")}>
            <ProviderBoxes providers={props.providers} draft={draft} onChange={edit} />
          </Field>
          <label class="check">
            <input
              type="checkbox"
              name="paths"
              checked={draft.paths}
              onChange={(event) => edit({ ...draft, paths: event.currentTarget.checked })}
            />
            May ask for a folder of this computer (each folder is still asked for in the browser)
          </label>
          <Field label="At most this many live sessions" id="policy-max" error={at("max")} hint="Empty: no limit.">
            <input
              id="policy-max"
              name="max-sessions"
              type="text"
              inputMode="numeric"
              placeholder="No limit"
              value={draft.max}
              onInput={(event) => edit({ ...draft, max: event.currentTarget.value })}
            />
          </Field>
          {failure === undefined ? null : <ErrorNote error={failure} todo="Nothing was changed. Try again." />}
          <div class="actions">
            <button type="button" class="button" onClick={props.onCancel}>
              Cancel
            </button>
            <button type="submit" class="button primary" disabled={busy}>
              {busy ? "Saving…" : "Save policy"}
            </button>
          </div>
        </form>
      </div>
    </div>
  )
}
