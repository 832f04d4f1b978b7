/**
 * ElectronDialog — Electron's `dialog.showMessageBox` as a service: a modal message with buttons, answered with the
 * label the user picked, or undefined when they dismissed it (Esc, the window's close button). Thin on purpose: what
 * the dialog says and what each answer does is the caller's (StartupDialog), tested against `makeTestDialog`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"

export interface DialogPrompt {
  readonly kind: "error" | "warning" | "info"
  readonly title: string
  /** The main line, e.g. `CODE: message`. */
  readonly message: string
  /** What to do about it. */
  readonly detail: string
  readonly buttons: ReadonlyArray<string>
  /** The button Enter picks. */
  readonly defaultButton: string
}

export interface ElectronDialogShape {
  /** Shows `prompt` until the user answers: the picked button's label, or undefined when dismissed. */
  readonly ask: (prompt: DialogPrompt) => Effect.Effect<string | undefined>
}

export class ElectronDialog extends Context.Service<ElectronDialog, ElectronDialogShape>()(
  "pedelec/desktop/ElectronDialog"
) {
  static readonly layer = Layer.effect(
    ElectronDialog,
    Effect.gen(function* () {
      const { dialog } = yield* Effect.promise(() => import("electron"))
      return ElectronDialog.of({
        ask: Effect.fn("ElectronDialog.ask")(function* (prompt: DialogPrompt) {
          const { response } = yield* Effect.promise(() =>
            dialog.showMessageBox({
              type: prompt.kind,
              title: prompt.title,
              message: prompt.message,
              detail: prompt.detail,
              buttons: [...prompt.buttons],
              defaultId: Math.max(0, prompt.buttons.indexOf(prompt.defaultButton)),
              // Past the buttons: Esc or closing the box answers no button (macOS then leaves Esc unbound).
              cancelId: prompt.buttons.length,
              noLink: true
            })
          )
          return prompt.buttons[response]
        })
      })
    })
  )

  static readonly layerTest = (dialog: TestDialog) => Layer.succeed(ElectronDialog, dialog)
}

/** The dialog as a test drives it: every prompt shown, and the user's answer to the one showing now. */
export interface TestDialog extends ElectronDialogShape {
  readonly prompts: Array<DialogPrompt>
  /** Answers the prompt showing (or the next one): a button's label, or undefined to dismiss it. */
  readonly answer: (button: string | undefined) => Effect.Effect<void>
}

export const makeTestDialog = (): Effect.Effect<TestDialog> =>
  Effect.gen(function* () {
    const answers = yield* Queue.unbounded<{ readonly button: string | undefined }>()
    const prompts: Array<DialogPrompt> = []
    return {
      prompts,
      ask: (prompt) =>
        Effect.sync(() => void prompts.push(prompt)).pipe(
          Effect.andThen(Queue.take(answers)),
          Effect.map((answer) => answer.button)
        ),
      answer: (button) => Queue.offer(answers, { button }).pipe(Effect.asVoid)
    }
  })
