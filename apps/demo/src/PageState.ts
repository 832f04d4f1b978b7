/**
 * PageState — what the agent's tools read and change, and its rendering: a counter, a list of items and a canvas
 * of shapes. Plain DOM, no framework; every change re-renders the part it touched. Deciding which tools exist is
 * Tools.ts's job.
 */

export type ShapeKind = "circle" | "rect"

/** A type alias, not an interface: it doubles as a tool's JSON arguments, which need an implicit index signature. */
export type Shape = {
  readonly kind: ShapeKind
  readonly x: number
  readonly y: number
  /** Circle: the radius; rect: the side. */
  readonly size: number
  readonly color: string
}

const element = <E extends HTMLElement>(id: string): E => {
  const found = document.getElementById(id)
  if (found === null) throw new Error(`the page has no #${id}`)
  return found as E
}

export class PageState {
  private count = 0
  private readonly items: Array<string> = []
  private readonly shapes: Array<Shape> = []
  private readonly counterView = element("counter-value")
  private readonly listView = element<HTMLUListElement>("list-items")
  private readonly canvas = element<HTMLCanvasElement>("shapes")

  constructor() {
    this.render()
  }

  get counter(): number {
    return this.count
  }

  setCounter(value: number): number {
    this.count = value
    this.renderCounter()
    return this.count
  }

  increment(by: number): number {
    return this.setCounter(this.count + by)
  }

  listItems(): Array<string> {
    return [...this.items]
  }

  addItem(text: string): Array<string> {
    this.items.push(text)
    this.renderList()
    return this.listItems()
  }

  /** Removes the first item equal to `text`; false when there is none. */
  removeItem(text: string): boolean {
    const index = this.items.indexOf(text)
    if (index < 0) return false
    this.items.splice(index, 1)
    this.renderList()
    return true
  }

  listShapes(): Array<Shape> {
    return [...this.shapes]
  }

  addShape(shape: Shape): number {
    this.shapes.push(shape)
    this.renderShapes()
    return this.shapes.length
  }

  clearShapes(): number {
    const removed = this.shapes.length
    this.shapes.length = 0
    this.renderShapes()
    return removed
  }

  get canvasSize(): { readonly width: number; readonly height: number } {
    return { width: this.canvas.width, height: this.canvas.height }
  }

  private render() {
    this.renderCounter()
    this.renderList()
    this.renderShapes()
  }

  private renderCounter() {
    this.counterView.textContent = String(this.count)
  }

  private renderList() {
    this.listView.replaceChildren(
      ...this.items.map((text) => {
        const item = document.createElement("li")
        item.textContent = text
        return item
      })
    )
  }

  private renderShapes() {
    const context = this.canvas.getContext("2d")
    if (context === null) return
    context.clearRect(0, 0, this.canvas.width, this.canvas.height)
    for (const shape of this.shapes) {
      context.fillStyle = shape.color
      if (shape.kind === "rect") {
        context.fillRect(shape.x, shape.y, shape.size, shape.size)
      } else {
        context.beginPath()
        context.arc(shape.x, shape.y, shape.size, 0, Math.PI * 2)
        context.fill()
      }
    }
  }
}
