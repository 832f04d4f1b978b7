/**
 * Unsaved — whether the screen on show holds edits not yet saved, so leaving it (the navigation, closing the
 * window) can ask first. The screen with the form sets it; the shell reads it.
 */
import { signal } from "@preact/signals"

export const unsavedChanges = signal(false)

window.addEventListener("beforeunload", (event) => {
  if (unsavedChanges.value) event.preventDefault()
})
