/**
 * The units vendors bill a task in, as their answers report it: Kling's resource-pack units
 * (`final_unit_deduction`), Runway's credits (`cost.credits`), ModelArk's tokens (`usage.completion_tokens`),
 * DashScope's seconds of video (`usage.duration`).
 */
export const BILLED_UNITS = ['units', 'credits', 'tokens', 'seconds'] as const;
export type BilledUnit = (typeof BILLED_UNITS)[number];

/** What a vendor reported it billed for one of its tasks: an amount of one of its units. */
export interface VendorBilled {
  amount: number;
  unit: BilledUnit;
}

/**
 * A vendor's billed figure as its answer gives it (a number, or a number as a string: Kling's
 * `final_unit_deduction` is one), or undefined when the answer has none or one that is not a finite amount
 * from 0: a figure the gateway cannot read is left out rather than guessed.
 */
export function billedFigure(value: unknown, unit: BilledUnit): VendorBilled | undefined {
  const amount = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : Number.NaN;
  return Number.isFinite(amount) && amount >= 0 ? { amount, unit } : undefined;
}
