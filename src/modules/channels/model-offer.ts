import { readAheadSoon } from '../../common/caches/read-ahead.js';
import { AppError } from '../../common/errors/app-error.js';

/** A model callers may ask for: its name, the vendor behind it, what it can do (its spec). */
export interface Offered<S> {
  name: string;
  vendor: string;
  spec: S;
  /** Taken only when a request names it (the sandbox's free-form model): never a match for a request that names none. */
  namedOnly?: boolean;
  /** Its spec is what a channel declared, not the catalog's (a vendor model the gateway does not know). */
  declared?: true;
}

/** How long the configured models are reused before the channels are read again. */
const CACHE_MS = 2000;

/**
 * The models an operation offers, read at most every 2 s (a failed read is not kept), and at once after a
 * channel was changed through this process (`writes`: the channel writes it made), so an admin's change is
 * in force for the next request here; other processes see it within 2 s. A request that finds them past
 * half their time is answered from them while they are read again in the background (READ_AHEAD_DELAY_MS
 * later), so a door's caller waits for that read only when no request came for the last second (one in
 * every 2 s of a busy door's requests waited before, a round trip on its path).
 */
export class OfferCache<S> {
  private cached?: { at: number; writes: number; models: Promise<Offered<S>[]> };
  private refreshing = false;

  constructor(
    private readonly read: () => Promise<Offered<S>[]>,
    private readonly writes: () => number = () => 0,
  ) {}

  offered(): Promise<Offered<S>[]> {
    const cached = this.cached;
    const age = cached ? Date.now() - cached.at : Infinity;
    if (cached && age < CACHE_MS && cached.writes === this.writes()) {
      if (age >= CACHE_MS / 2 && !this.refreshing) {
        this.refreshing = true;
        readAheadSoon(() => void this.readAhead(cached));
      }
      return cached.models;
    }
    return this.readNow();
  }

  private readNow(): Promise<Offered<S>[]> {
    const writes = this.writes();
    const models = this.read().catch((err: unknown) => {
      this.cached = undefined;
      throw err;
    });
    this.cached = { at: Date.now(), writes, models };
    return models;
  }

  /** Read again behind `cached`, which stays until the read is done; a failed read leaves it to end at its time. */
  private async readAhead(cached: NonNullable<OfferCache<S>['cached']>): Promise<void> {
    try {
      // the read that made them, if still running (a slow database), ends first: never two reads at once
      await cached.models;
      const at = Date.now();
      const writes = this.writes();
      const models = await this.read();
      // a write here, or a read on a path, since: theirs is the newer
      if (this.cached === cached) this.cached = { at, writes, models: Promise.resolve(models) };
    } catch {
      // the database is away: the cached models end at their own time, and a request's read reports it
    } finally {
      this.refreshing = false;
    }
  }
}

/** What an operation's check needs to know of its requests' fields. */
export interface FieldRules<S, R extends { model?: string }, F extends string> {
  /** Its fields, in the order a refusal names them. */
  fields: readonly F[];
  /** The fields of `request` this spec cannot honour. */
  unmet(spec: S, request: R): F[];
  /** The asked value of a field, in words. */
  describe(field: F, request: R): string;
  /** What a model makes of a field for this request, in words ("2 to 12 s"), for a refusal of a model the request names; undefined when nothing short says it. */
  offers?(field: F, spec: S, request: R): string | undefined;
}

/**
 * Refuses (400) a request no offered model could ever make, naming the door's fields (`labels`) it cannot
 * have together and the models that could make it, or each field. A door that is one vendor's API (`vendor`:
 * Kling's) takes, for a request that names no model, what that vendor's offered models make, as the vendor
 * itself would; any model's when none of them is offered. Which channel then makes it is the router's choice.
 */
export function refuseUnmade<S, R extends { model?: string }, F extends string>(
  offered: Offered<S>[],
  request: R,
  rules: FieldRules<S, R, F>,
  /** The door's name of each field (`model` among them). */
  labels: Record<F, string>,
  vendor?: { protocol: string; title: string },
): void {
  if (offered.length === 0) return; // no channel yet: the task waits for one, as any relayed task does
  const native = vendor !== undefined && offered.some((m) => m.vendor === vendor.protocol);
  const pool = askedPool(offered, request, vendor?.protocol);
  if (pool.length === 0) throw new AppError('INVALID_PARAMETER', `${(labels as Record<string, string>).model} must be one of the configured models: ${names(offered)} (not ${request.model})`);
  const unmet = pool.map((m) => rules.unmet(m.spec, request));
  if (unmet.some((u) => u.length === 0)) return;
  const failing = rules.fields.filter((f) => unmet.some((u) => u.includes(f)));
  const blocking = failing.filter((f) => unmet.every((u) => u.includes(f)));
  const fields = blocking.length > 0 ? blocking : failing;
  const generic = request.model === undefined && !native;
  const asked = request.model !== undefined ? `model ${request.model} does not make` : native ? `no configured ${vendor!.title} model makes` : 'no configured model makes';
  const whole = offered.filter((m) => rules.unmet(m.spec, request).length === 0);
  const could: string[] = [];
  if (whole.length > 0) could.push(`models that could make it: ${names(whole)}`);
  else {
    const makers = fields.map((f) => ({ f, by: names(offered.filter((m) => !rules.unmet(m.spec, request).includes(f))) }));
    could.push(...new Set(makers.filter((m) => m.by).map((m) => `${labels[m.f]} is made by ${m.by}`)));
    const unmade = makers.filter((m) => !m.by).map((m) => m.f);
    // each field and its rule said once: "no configured model makes this …" already says it when nothing was named
    if (unmade.length > 0 && !(generic && unmade.length === fields.length)) {
      could.push(`no configured model makes ${unmade.length === fields.length ? 'it' : unmade.map((f) => `the ${rules.describe(f, request)}`).join(' or ')}`);
    }
  }
  // a named model: what it makes of each refused field, so the caller reads the rule, not only the refusal
  // (said only when every channel's model of that name makes the same of it)
  const makes =
    request.model !== undefined && rules.offers
      ? fields.flatMap((f) => {
          const said = new Set(pool.map((m) => rules.offers!(f, m.spec, request)));
          const [only] = said;
          return said.size === 1 && only !== undefined ? [only] : [];
        })
      : [];
  const fault = `${[...new Set(fields.map((f) => labels[f]))].join(', ')}: ${asked} this ${fields.map((f) => rules.describe(f, request)).join(' with ')}${makes.length > 0 ? ` (it makes ${makes.join('; ')})` : ''}`;
  throw new AppError('INVALID_PARAMETER', [fault, ...could].join('; '));
}

/**
 * The offered models a request is for: those of the name it asks, else any a request naming none may take
 * (not the sandbox's free-form model), and at a door that is one vendor's API (`vendor`), that vendor's where
 * any of them is offered.
 */
export function askedPool<S>(offered: Offered<S>[], request: { model?: string }, vendor?: string): Offered<S>[] {
  if (request.model !== undefined) return offered.filter((m) => m.name === request.model);
  const native = vendor !== undefined && offered.some((m) => m.vendor === vendor);
  return offered.filter((m) => !m.namedOnly && (!native || m.vendor === vendor));
}

function names<S>(models: Offered<S>[]): string {
  return [...new Set(models.map((m) => `${m.name} (${m.vendor})`))].join(', ');
}
