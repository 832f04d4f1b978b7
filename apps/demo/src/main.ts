/**
 * The demo page's entry: one Pedelec client (extension id from `?extensionId=`, else the published one), the page
 * state, its tools, and the chat that opens a session with them on the default provider.
 */
import { Pedelec } from "@pedelec/sdk"
import { Chat } from "./Chat.ts"
import { PageState } from "./PageState.ts"
import { demoTools, GUIDANCE } from "./Tools.ts"

const extensionId = new URLSearchParams(location.search).get("extensionId") ?? undefined
const client = new Pedelec(extensionId === undefined ? {} : { extensionId })
const state = new PageState()
const tools = demoTools(state)

const chat = new Chat({
  client,
  open: (pedelec) => pedelec.createSession({ skills: { guidance: GUIDANCE, tools } })
})
void chat.checkAvailability()
