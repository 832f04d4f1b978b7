/**
 * `#error-catalog` in the extension's bundle: the specs of every code the SDK or the extension raises. package.json
 * `imports` picks this file under the `pedelec-extension` condition, which the extension's build sets.
 */
import { BROWSER_ERRORS, type ErrorCode, type ErrorSpec } from "../ErrorCode.ts"

export const CATALOG: { readonly [C in ErrorCode]?: ErrorSpec } = BROWSER_ERRORS
