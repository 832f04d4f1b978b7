/**
 * main — Electron's entry, composition only: one ManagedRuntime over DesktopLayer; once Electron is ready it runs
 * DesktopApp.program. At will-quit the quit waits for the runtime to be disposed (the program's scope closed: tray,
 * window, the bridge's watches, and the Core the app started told to stop), then exits.
 */

import * as Fiber from "effect/Fiber"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { app } from "electron"
import { program } from "./DesktopApp.ts"
import { DesktopLayer } from "./DesktopLayer.ts"

const runtime = ManagedRuntime.make(DesktopLayer)

void app.whenReady().then(() => {
  const running = runtime.runFork(program)
  let disposing = false
  app.on("will-quit", (event) => {
    if (disposing) return
    disposing = true
    event.preventDefault()
    void runtime
      .runPromise(Fiber.interrupt(running))
      .then(() => runtime.dispose())
      .finally(() => app.exit(0))
  })
})
