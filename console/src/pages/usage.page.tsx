import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { getOwnerLimits, getUsage, getUsageByDay } from '../api/sdk.gen';
import type { AdminUsageDto, OwnerLimitsDto, UsageDto } from '../api/types.gen';
import { type DailyRow, DailyChart } from '../components/daily-chart.component';
import { ErrorMessage, Loading } from '../components/status.component';
import { call } from '../lib/api.client';
import { formatBilled, formatLimit, operationName } from '../lib/format';
import type { Session } from '../lib/session.store';
import { usePoll } from '../lib/use-poll.hook';

const REFUSALS: Record<number, string> = { 1302: 'Requests per minute (1302 rate_limited)', 1303: 'Concurrent tasks (1303 concurrency_limited)', 1102: 'Monthly credits (1102 resource_pack_exhausted)' };

function Credits({ used, remaining, monthly }: { used: number; remaining: number | null; monthly: number | null }): JSX.Element {
  return (
    <dl class="summary credits">
      <dt>Credits used this month</dt>
      <dd id="credits-used">{used.toLocaleString()}</dd>
      <dt>Credits left this month</dt>
      <dd id="credits-left">{remaining === null ? 'unlimited' : remaining.toLocaleString()}</dd>
      <dt>Monthly allowance</dt>
      <dd>{formatLimit(monthly)}</dd>
    </dl>
  );
}

function Refusals({ counts }: { counts: { code: number; count: number }[] }): JSX.Element {
  return (
    <table class="refusals">
      <caption>Refused by a limit</caption>
      <thead>
        <tr>
          <th scope="col">Limit (code)</th>
          <th scope="col">Refusals</th>
        </tr>
      </thead>
      <tbody>
        {[1302, 1303, 1102].map((code) => (
          <tr key={code}>
            <th scope="row">{REFUSALS[code]}</th>
            <td>{counts.filter((c) => c.code === code).reduce((n, c) => n + c.count, 0)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function UsagePage({ session }: { session: Session }): JSX.Element {
  return session.admin ? <AdminUsage /> : <TeamUsage />;
}

function TeamUsage(): JSX.Element {
  const usage = usePoll<UsageDto>(() => call(getUsage()), [], 15_000);
  const u = usage.data;
  return (
    <section>
      <h1 tabIndex={-1}>Usage</h1>
      <ErrorMessage error={usage.error} title="Could not load the usage" />
      {!u && usage.loading && <Loading what="usage" />}
      {u && (
        <>
          <p class="lead">
            {u.owner}, {u.month} (UTC).
          </p>
          <section aria-labelledby="credits-h">
            <h2 id="credits-h">Credits</h2>
            <Credits used={u.credits.used} remaining={u.credits.remaining} monthly={u.credits.monthly_credits} />
          </section>
          <section aria-labelledby="daily-h">
            <h2 id="daily-h">Tasks per day and operation</h2>
            <DailyChart rows={u.days} title={`Tasks accepted per day, ${u.month}`} />
          </section>
          <section aria-labelledby="ops-h">
            <h2 id="ops-h">This month by operation</h2>
            <table>
              <caption>Tasks and credits by operation</caption>
              <thead>
                <tr>
                  <th scope="col">Operation</th>
                  <th scope="col">Accepted</th>
                  <th scope="col">Succeeded</th>
                  <th scope="col">Failed</th>
                  <th scope="col">Credits charged</th>
                  <th scope="col">Credits refunded</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(u.operations).map(([op, o]) => (
                  <tr key={op}>
                    <th scope="row">{operationName(op)}</th>
                    <td>{o.accepted}</td>
                    <td>{o.succeeded}</td>
                    <td>{o.failed}</td>
                    <td>{o.credits_charged}</td>
                    <td>{o.credits_refunded}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section aria-labelledby="refusals-h">
            <h2 id="refusals-h">Refusals by code</h2>
            <Refusals counts={u.refusals} />
          </section>
        </>
      )}
    </section>
  );
}

function firstOfMonth(): string {
  return `${new Date().toISOString().slice(0, 7)}-01`;
}

function AdminUsage(): JSX.Element {
  const today = new Date().toISOString().slice(0, 10);
  const [draft, setDraft] = useState({ owner: '', from: firstOfMonth(), to: today });
  const [query, setQuery] = useState(draft);
  const usage = usePoll<{ days: AdminUsageDto; limits: OwnerLimitsDto | null }>(
    async () => {
      const owner = query.owner.trim() || undefined;
      const [days, limits] = await Promise.all([
        call(getUsageByDay({ query: { owner, from: query.from || undefined, to: query.to || undefined } })),
        owner ? call(getOwnerLimits({ path: { owner } })) : Promise.resolve(null),
      ]);
      return { days, limits };
    },
    [query],
    15_000,
  );
  const rows: DailyRow[] = [];
  for (const d of usage.data?.days.days ?? []) {
    const row = rows.find((r) => r.day === d.day && r.operation === d.operation);
    if (row) {
      row.accepted += d.accepted;
      row.succeeded += d.succeeded;
      row.failed += d.failed;
    } else rows.push({ day: d.day, operation: d.operation, accepted: d.accepted, succeeded: d.succeeded, failed: d.failed });
  }
  const credits = (usage.data?.days.days ?? []).reduce((n, d) => n + d.credits_charged - d.credits_refunded, 0);
  return (
    <section>
      <h1 tabIndex={-1}>Usage</h1>
      <form
        class="filters"
        aria-label="Usage of"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ ...draft });
        }}
      >
        <div class="field">
          <label for="u-owner">Owner (empty: every owner)</label>
          <input id="u-owner" type="text" autoComplete="off" value={draft.owner} onInput={(e) => setDraft({ ...draft, owner: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="u-from">From</label>
          <input id="u-from" type="date" value={draft.from} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="u-to">To</label>
          <input id="u-to" type="date" value={draft.to} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} />
        </div>
        <div class="actions">
          <button type="submit">Show usage</button>
        </div>
      </form>
      <ErrorMessage error={usage.error} title="Could not load the usage" />
      {!usage.data && usage.loading && <Loading what="usage" />}
      {usage.data && (
        <>
          <section aria-labelledby="credits-h">
            <h2 id="credits-h">Credits</h2>
            {usage.data.limits ? (
              <Credits used={usage.data.limits.usage.credits_used} remaining={usage.data.limits.usage.credits_remaining} monthly={usage.data.limits.monthly_credits} />
            ) : (
              <p>
                {credits.toLocaleString()} credits charged (refunds deducted) from {usage.data.days.from} to {usage.data.days.to}, every owner. Name an owner to see what is left of its month.
              </p>
            )}
          </section>
          <section aria-labelledby="daily-h">
            <h2 id="daily-h">Tasks per day and operation</h2>
            <DailyChart rows={rows} title={`Tasks accepted per day, ${usage.data.days.from} to ${usage.data.days.to}${usage.data.days.owner ? `, ${usage.data.days.owner}` : ''}`} />
          </section>
          <section aria-labelledby="refusals-h">
            <h2 id="refusals-h">Refusals by code</h2>
            <Refusals counts={usage.data.days.refusals} />
          </section>
          <section aria-labelledby="upstream-h">
            <h2 id="upstream-h">Upstream cost</h2>
            {usage.data.days.upstream_costs.length === 0 ? (
              <p class="empty">No upstream task in the period (sandbox tasks cost nothing upstream).</p>
            ) : (
              <table>
                <caption>Upstream tasks and what they cost the company, by owner, channel and model, beside the credits charged above; what the vendors reported they billed beside it, and the tasks billed beyond the tolerance</caption>
                <thead>
                  <tr>
                    <th scope="col">Owner</th>
                    <th scope="col">Operation</th>
                    <th scope="col">Channel</th>
                    <th scope="col">Model</th>
                    <th scope="col">Upstream tasks</th>
                    <th scope="col">Cost</th>
                    <th scope="col">Vendor billed</th>
                    <th scope="col">Billed cost</th>
                    <th scope="col">Billing mismatches</th>
                  </tr>
                </thead>
                <tbody>
                  {usage.data.days.upstream_costs.map((c) => (
                    <tr key={`${c.owner}/${c.operation}/${c.channel}/${c.model}`} class={c.billing_mismatches > 0 ? 'mismatch-row' : undefined} data-upstream-cost={`${c.owner}/${c.operation}/${c.channel}/${c.model}`}>
                      <td>{c.owner}</td>
                      <td>{c.operation}</td>
                      <td>{c.channel}</td>
                      <td>{c.model || '—'}</td>
                      <td>{c.upstream_tasks}</td>
                      <td>{c.cost.toLocaleString()}{c.unpriced > 0 ? ` (${c.unpriced} unpriced)` : ''}</td>
                      <td>{formatBilled(c.billed)}{c.unbilled > 0 ? ` (${c.unbilled} not reported)` : ''}</td>
                      <td>{c.billed_cost === null ? '—' : c.billed_cost.toLocaleString()}</td>
                      <td>{c.billing_mismatches > 0 ? <strong class="mismatch">{c.billing_mismatches} beyond tolerance</strong> : '0'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        </>
      )}
    </section>
  );
}
