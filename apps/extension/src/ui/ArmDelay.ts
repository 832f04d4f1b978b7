/**
 * ArmDelay — the click-jacking guard of the extension's consent windows (approval.html, confirm.html): their yes
 * buttons stay disabled until the window has been visible for APPROVE_DELAY_MS, counted again each time it comes to
 * the front, the moment a click meant for the page could land on them. Browser DOM only.
 */
import { APPROVE_DELAY_MS } from "../approval/ApprovalTimings.ts"

export const armAfterDelay = (buttons: ReadonlyArray<HTMLButtonElement>): void => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const arm = () => {
    clearTimeout(timer)
    for (const button of buttons) button.disabled = true
    timer = setTimeout(() => {
      for (const button of buttons) button.disabled = document.visibilityState !== "visible"
    }, APPROVE_DELAY_MS)
  }
  window.addEventListener("focus", arm)
  document.addEventListener("visibilitychange", arm)
  arm()
}
