/**
 * VirtualList — a fixed-row-height list that renders only the rows in view (plus a few), driven by
 * @tanstack/virtual-core from a Preact component: the Virtualizer lives in a ref, its scroll element is the list's
 * own div, and its onChange re-renders this component only (rows are keyed, so Preact keeps the ones that stay).
 * It follows the end while the user is at the end (a live tail), and stops following once they scroll up. What a
 * row shows is the caller's; this file owns no data.
 */
import {
  elementScroll,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
  type VirtualizerOptions
} from "@tanstack/virtual-core"
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useLayoutEffect, useReducer, useRef, useState } from "preact/hooks"

const OVERSCAN = 12
/** Within this many pixels of the end counts as "at the end". */
const END_SLACK = 8

export interface VirtualListProps {
  readonly count: number
  readonly rowHeight: number
  readonly keyOf: (index: number) => string
  readonly row: (index: number) => ComponentChildren
  readonly label: string
}

type Options = VirtualizerOptions<HTMLElement, HTMLElement>

const options = (props: VirtualListProps, scroller: () => HTMLElement | null, onChange: () => void): Options => ({
  count: props.count,
  getScrollElement: scroller,
  estimateSize: () => props.rowHeight,
  getItemKey: props.keyOf,
  overscan: OVERSCAN,
  scrollToFn: elementScroll,
  observeElementRect,
  observeElementOffset,
  onChange
})

/** The virtualizer, created once, its options refreshed on every render (count, key and height may change). */
const useVirtualizer = (props: VirtualListProps, scroller: { current: HTMLElement | null }) => {
  const [, bump] = useReducer((n: number, _: undefined) => n + 1, 0)
  const rerender = () => bump(undefined)
  const virtualizer = useRef<Virtualizer<HTMLElement, HTMLElement> | null>(null)
  const opts = options(props, () => scroller.current, rerender)
  if (virtualizer.current === null) virtualizer.current = new Virtualizer(opts)
  else virtualizer.current.setOptions(opts)
  const current = virtualizer.current
  useLayoutEffect(() => current._didMount(), [current])
  useLayoutEffect(() => current._willUpdate())
  return current
}

/** Keeps the end in view while following; the user leaves the end to stop following and returns to resume. */
const useFollow = (count: number, virtualizer: Virtualizer<HTMLElement, HTMLElement>, el: HTMLElement | null) => {
  const following = useRef(true)
  useEffect(() => {
    if (el === null) return
    const onScroll = () => {
      following.current = el.scrollTop + el.clientHeight >= el.scrollHeight - END_SLACK
    }
    el.addEventListener("scroll", onScroll, { passive: true })
    return () => el.removeEventListener("scroll", onScroll)
  }, [el])
  useLayoutEffect(() => {
    if (following.current && count > 0) virtualizer.scrollToIndex(count - 1, { align: "end" })
  }, [count, virtualizer])
}

export const VirtualList = (props: VirtualListProps) => {
  const scroller = useRef<HTMLElement | null>(null)
  const [el, setEl] = useState<HTMLElement | null>(null)
  const virtualizer = useVirtualizer(props, scroller)
  useFollow(props.count, virtualizer, el)
  const items = virtualizer.getVirtualItems()
  // Stable, so Preact does not detach and re-attach it on each render.
  const attach = useCallback((div: HTMLElement | null) => {
    scroller.current = div
    setEl(div)
  }, [])
  return (
    <section class="vlist" ref={attach} aria-label={props.label}>
      <div class="vlist-space" style={{ height: `${virtualizer.getTotalSize()}px` }}>
        {items.map((item) => (
          <div
            class="vlist-row"
            key={item.key}
            data-index={item.index}
            style={{ transform: `translateY(${item.start}px)`, height: `${props.rowHeight}px` }}
          >
            {props.row(item.index)}
          </div>
        ))}
      </div>
    </section>
  )
}
