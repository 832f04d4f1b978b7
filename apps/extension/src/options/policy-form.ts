/**
 * policy-form — a site's policy on the options page, as a form: which providers its sessions may run (any, or only
 * the ones ticked), whether it may ask for a folder of this computer as a workspace, and at most how many live
 * sessions. It draws and reads the form only; saving goes through the worker (options-page), which sets Core's copy
 * first. Stable selectors for tests: `form.policy[data-origin]`, `input[name=any-provider]`, `input[name=provider]`,
 * `input[name=paths]`, `input[name=max-sessions]`, `button.save-policy`.
 */
import { PROVIDER_CODES, type ProviderCode } from "@pedelec/contracts/Provider"
import type { SitePolicy } from "@pedelec/contracts/SitePolicy"

/** The test agent is not something a user picks for a site. */
const CHOOSABLE = PROVIDER_CODES.filter((code) => code !== "scripted")

const labelled = (input: HTMLInputElement, text: string) => {
  const label = document.createElement("label")
  label.append(input, ` ${text}`)
  return label
}

const input = (type: string, name: string, checked = false, value = "") => {
  const element = document.createElement("input")
  element.type = type
  element.name = name
  element.checked = checked
  element.value = value
  return element
}

/** The form for `origin`; `save` gets the policy as the form says it, or a sentence saying what to fix. */
export const policyForm = (
  origin: string,
  policy: SitePolicy,
  save: (policy: SitePolicy) => void,
  invalid: (message: string) => void
): HTMLFormElement => {
  const form = document.createElement("form")
  form.className = "policy"
  form.dataset.origin = origin
  const any = input("checkbox", "any-provider", policy.allowedProviders === undefined)
  const providers = document.createElement("div")
  providers.className = "providers"
  for (const code of CHOOSABLE) {
    const box = input("checkbox", "provider", policy.allowedProviders?.includes(code) ?? true, code)
    providers.append(labelled(box, code))
  }
  const setEnabled = () => {
    for (const box of providers.querySelectorAll("input")) box.disabled = any.checked
  }
  any.addEventListener("change", setEnabled)
  setEnabled()
  const paths = input("checkbox", "paths", policy.allowWorkspacePaths)
  const max = input(
    "number",
    "max-sessions",
    false,
    policy.maxLiveSessions === undefined ? "" : String(policy.maxLiveSessions)
  )
  max.min = "1"
  max.max = "1000"
  max.placeholder = "no limit"
  const saveButton = document.createElement("button")
  saveButton.type = "submit"
  saveButton.textContent = "Save policy"
  saveButton.className = "save-policy"
  const maxLabel = document.createElement("label")
  maxLabel.append("At most ", max, " live sessions at once (empty: no limit)")
  form.append(
    labelled(any, "Any provider"),
    providers,
    labelled(paths, "May ask for a folder of this computer"),
    maxLabel,
    saveButton
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const chosen = [...providers.querySelectorAll<HTMLInputElement>("input:checked")].map(
      (box) => box.value as ProviderCode
    )
    const limit = max.value.trim() === "" ? undefined : Number(max.value)
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 1000)) {
      return invalid("The session limit is a whole number from 1 to 1000, or empty for no limit.")
    }
    save({
      ...(any.checked ? {} : { allowedProviders: chosen }),
      allowWorkspacePaths: paths.checked,
      ...(limit === undefined ? {} : { maxLiveSessions: limit })
    })
  })
  return form
}
