import type { Task } from '../../common/tasks/task-kind.js';
import type { StemSplit } from '../../vendors/contracts/stems-vendor.js';

/**
 * A stems task's parameters document, in the gateway's own words: the clip split (stored here), the split asked
 * (`two`: vocals and instrumental; `all`: every stem the vendor makes), the model named, and what the gateway
 * resolved of the clip: its title (the stems' clips show it beside their names) and, where a vendor made it, that
 * vendor's ids of it and the channel that holds it (a vendor that splits only its own clips names it so).
 */
export interface StemsParams {
  clip_id: string;
  split: StemSplit;
  /** The model named (the name callers use); null: any configured model that makes the split. */
  model: string | null;
  title: string | null;
  upstream_clip_id: string | null;
  upstream_task_id: string | null;
  channel_id: string | null;
}

/** One stem kept: the clip that holds it, its name and how long it lasts. */
export interface StoredStem {
  clip_id: string;
  name: string;
  duration_s: number;
}

/** What a success stores: the stems, in the vendor's order (their files are the clips' audio). */
export interface StemsResult {
  stems: StoredStem[];
}

export type StemsTask = Task<StemsParams, StemsResult>;

/** A stem's name on a clip of a stems task (its title), by the clip's place; undefined for any other task's clip. */
export function stemNameOf(task: { kind: string; result?: unknown }, idx: number): string | undefined {
  if (task.kind !== 'stems') return undefined;
  return (task.result as StemsResult | null | undefined)?.stems?.[idx]?.name;
}
