/**
 * Unknown — narrowing of values read by hand on the effect-free agent path (JSON lines, runtime files), where no
 * Schema is loaded. It does not decode any particular message: Agent, AgentWire and PageTools do, with this.
 */

/** A plain object (not null, not an array), whose keys are still to be checked. */
export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
