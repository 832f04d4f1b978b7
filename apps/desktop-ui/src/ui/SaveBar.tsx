/**
 * SaveBar — the bar a form with unsaved edits shows (Settings, Effort profiles): why Save is off, Discard, Save; and
 * `useUnsaved`, which tells the shell (Unsaved) that this screen holds edits, so leaving asks first. Checking the
 * fields and saving them are the screens' own.
 */
import { useEffect } from "preact/hooks"
import { unsavedChanges } from "./Unsaved.ts"

export const SaveBar = (props: {
  readonly invalid: boolean
  readonly saving: boolean
  readonly onSave: () => void
  readonly onDiscard: () => void
}) => (
  <section class="save-bar" aria-label="Unsaved changes">
    <span>{props.invalid ? "Fix the fields marked in red to save." : "You have unsaved changes."}</span>
    <div class="actions">
      <button type="button" class="button" onClick={props.onDiscard}>
        Discard
      </button>
      <button type="button" class="button primary" onClick={props.onSave} disabled={props.invalid || props.saving}>
        {props.saving ? "Saving…" : "Save"}
      </button>
    </div>
  </section>
)

/** While `dirty`, leaving the screen asks first; leaving it (unmounting) clears the flag. */
export const useUnsaved = (dirty: boolean) => {
  useEffect(() => {
    unsavedChanges.value = dirty
  }, [dirty])
  useEffect(
    () => () => {
      unsavedChanges.value = false
    },
    []
  )
}
