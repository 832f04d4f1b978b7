/**
 * Chat — the demo's conversation: a transcript, a text box, a status line and an error line. It opens the session
 * on the first message (that is when the extension asks the user to approve this page), streams the reply from
 * `onChatDelta` (one bubble per assistant message, settled by `onChat`), and shows every failure with its code and
 * message. What the tools do is Tools.ts's business.
 */
import { type Pedelec, PedelecError, type PedelecSession } from "@pedelec/sdk"

export interface ChatOptions {
  readonly client: Pedelec
  readonly open: (client: Pedelec) => Promise<PedelecSession>
}

const element = <E extends HTMLElement>(id: string): E => document.getElementById(id) as E

export class Chat {
  private session: PedelecSession | undefined
  /** The assistant bubble deltas are appended to; undefined once its message is complete. */
  private streaming: HTMLElement | undefined
  private readonly transcript = element("transcript")
  private readonly input = element<HTMLTextAreaElement>("message")
  private readonly sendButton = element<HTMLButtonElement>("send")
  private readonly cancelButton = element<HTMLButtonElement>("cancel")
  private readonly statusView = element("status")
  private readonly errorView = element("error")

  private readonly options: ChatOptions

  constructor(options: ChatOptions) {
    this.options = options
    element<HTMLFormElement>("chat").addEventListener("submit", (event) => {
      event.preventDefault()
      void this.send()
    })
    this.cancelButton.addEventListener("click", () => {
      this.session?.cancel().catch((error: unknown) => this.showError(error))
    })
  }

  /** Shows whether the extension and the desktop side answer, before the user types anything. */
  async checkAvailability(): Promise<void> {
    const { extension, approval, desktop, error } = await this.options.client.checkAvailability()
    if (!extension.available) this.setStatus("the Pedelec extension is not available")
    else if (!approval.approved) this.setStatus("ready: your first message asks you to approve this page")
    else this.setStatus(desktop.available ? "ready" : "Pedelec on this computer is not reachable")
    if (error !== undefined && (!extension.available || approval.approved)) this.showError(error)
  }

  private async send() {
    const text = this.input.value.trim()
    if (text === "") return
    this.errorView.textContent = ""
    this.sendButton.disabled = true
    try {
      const session = await this.ensureSession()
      this.bubble("user", text)
      this.input.value = ""
      const result = await session.sendText(text)
      if (result.reason === "cancelled") this.bubble("note", "(cancelled)")
    } catch (error) {
      this.showError(error)
    } finally {
      this.streaming = undefined
      this.sendButton.disabled = false
    }
  }

  private async ensureSession(): Promise<PedelecSession> {
    if (this.session !== undefined && this.session.getStatus() !== "ended") return this.session
    this.setStatus("waiting for approval…")
    const session = await this.options.open(this.options.client)
    session.onChatDelta((delta) => {
      this.streaming ??= this.bubble("assistant", "")
      this.streaming.textContent += delta
    })
    session.onChat((text) => {
      const bubble = this.streaming ?? this.bubble("assistant", "")
      bubble.textContent = text
      this.streaming = undefined
    })
    session.onStatus((status) => {
      this.setStatus(status)
      this.cancelButton.disabled = status !== "running" && status !== "waiting_tool_result"
    })
    session.onError((error) => this.showError(error))
    session.onEnded(() => {
      this.setStatus("ended")
      this.session = undefined
    })
    this.session = session
    this.setStatus(`idle — ${session.provider}${session.model === null ? "" : ` (${session.model})`}`)
    return session
  }

  private bubble(kind: "user" | "assistant" | "note", text: string): HTMLElement {
    const bubble = document.createElement("p")
    bubble.className = `bubble ${kind}`
    bubble.textContent = text
    this.transcript.append(bubble)
    bubble.scrollIntoView({ block: "end" })
    return bubble
  }

  private setStatus(status: string) {
    this.statusView.textContent = status
  }

  private showError(error: unknown) {
    this.errorView.textContent =
      error instanceof PedelecError
        ? `${error.code}: ${error.message}`
        : error instanceof Error
          ? error.message
          : String(error)
  }
}
