/** `#error-catalog` everywhere but browser bundles: every code's spec. */
import { ERROR_CATALOG, type ErrorCode, type ErrorSpec } from "../ErrorCode.ts"

export const CATALOG: { readonly [C in ErrorCode]?: ErrorSpec } = ERROR_CATALOG
