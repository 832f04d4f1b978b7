/**
 * `#error-catalog` in a page's bundle (the SDK): the specs of the codes the SDK raises, and nothing else, so the SDK
 * stays in its size budget; errors the extension or Core raise arrive with their message written. package.json
 * `imports` picks this file under the `browser` condition (esbuild's browser platform).
 */
import { type ErrorCode, type ErrorSpec, PAGE_ERRORS } from "../ErrorCode.ts"

export const CATALOG: { readonly [C in ErrorCode]?: ErrorSpec } = PAGE_ERRORS
