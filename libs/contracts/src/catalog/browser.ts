/**
 * `#error-catalog` in browser bundles: the specs of the codes browsers raise, and nothing else, so the SDK stays in
 * its size budget. package.json `imports` picks this file under the `browser` condition (esbuild's browser platform).
 */
import { BROWSER_ERRORS, type ErrorCode, type ErrorSpec } from "../ErrorCode.ts"

export const CATALOG: { readonly [C in ErrorCode]?: ErrorSpec } = BROWSER_ERRORS
