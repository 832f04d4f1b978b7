/**
 * Callback sets for one session. A page's callback that throws must not stop the others or the session's own
 * bookkeeping, so each runs on its own and a throw is reported to the page's global error handler.
 */
export class Listeners<Args extends ReadonlyArray<unknown>> {
  readonly #callbacks = new Set<(...args: Args) => void>()

  add(callback: (...args: Args) => void): () => void {
    // A wrapper per registration, so registering the same function twice gives two independent unsubscribes.
    const entry = (...args: Args) => callback(...args)
    this.#callbacks.add(entry)
    return () => {
      this.#callbacks.delete(entry)
    }
  }

  emit(...args: Args): void {
    for (const callback of [...this.#callbacks]) {
      try {
        callback(...args)
      } catch (error) {
        reportError(error)
      }
    }
  }

  clear(): void {
    this.#callbacks.clear()
  }
}

const reportError = (error: unknown): void => {
  const report = (globalThis as { reportError?: (error: unknown) => void }).reportError
  if (report !== undefined) report(error)
  else
    setTimeout(() => {
      throw error
    })
}
