/**
 * ElectronError — an Electron API that refused: a window whose page would not load, a tray icon that is not an
 * image, an IPC channel already handled. It carries a contracts code and a message saying what to do, so the
 * renderer and the tray show it as `CODE: message` like every other error. Raising it is each Electron service's
 * job; deciding what the app does about it is DesktopApp's.
 */
import { ErrorCode } from "@pedelec/contracts/ErrorCode"
import * as Schema from "effect/Schema"

export class ElectronError extends Schema.TaggedError<ElectronError>()("ElectronError", {
  code: ErrorCode,
  /** The Electron API that failed, e.g. `BrowserWindow.loadURL`. */
  api: Schema.String,
  message: Schema.String
}) {
  /** A failure of the app's own making (a missing bundle file, a channel handled twice): INTERNAL_ERROR. */
  static internal(api: string, cause: unknown, hint: string): ElectronError {
    const reason = cause instanceof Error ? cause.message : String(cause)
    return new ElectronError({ code: "INTERNAL_ERROR", api, message: `${api} failed: ${reason}. ${hint}` })
  }
}
