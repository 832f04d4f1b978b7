/**
 * The renderer's entry: picks how to reach main (BridgeClient.ts) and renders the app. Preact because it needs no
 * compiler plugin (esbuild's automatic JSX runtime is enough, and esbuild is the house bundler), is about 4 KB, and
 * with @preact/signals re-renders only what a changed value reaches — no hand-made DOM diffing.
 */
import { render } from "preact"
import { pickClient } from "./bridge/BridgeClient.ts"
import { useClient } from "./bridge/Desktop.ts"
import { App } from "./ui/App.tsx"

const root = document.getElementById("app")
const client = pickClient()
if (root !== null) {
  if (client === undefined) {
    root.textContent =
      "Pedelec's window was opened without its bridge. Start it from the desktop app or `npm run desktop:preview`."
  } else {
    useClient(client)
    // The boot line is plain HTML, not Preact's: render would keep it beside the app.
    root.replaceChildren()
    render(<App />, root)
  }
}
