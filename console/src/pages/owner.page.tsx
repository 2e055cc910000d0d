import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { getOwnerLimits, getWebhookSecret, listApiKeys, rotateWebhookSecret, setOwnerLimits } from '../api/sdk.gen';
import type { KeyDto, OwnerLimitsDto, SetLimitsDto, WebhookSecretDto } from '../api/types.gen';
import { ErrorMessage, Loading, Notice } from '../components/status.component';
import { call } from '../lib/api.client';
import { formatLimit, formatTime } from '../lib/format';
import { Link } from '../lib/router';
import { usePoll } from '../lib/use-poll.hook';
import { CreateKeyForm, KeysTable } from './owners.page';

type LimitField = keyof SetLimitsDto;
const LIMITS: { field: LimitField; label: string; help: string }[] = [
  { field: 'requests_per_minute', label: 'Requests per minute', help: 'On every keyed route, across every instance (429, code 1302, over it).' },
  { field: 'max_concurrent_tasks', label: 'Concurrent task slots', help: 'Slots unfinished tasks may hold (an expand task holds n; 429, code 1303).' },
  { field: 'monthly_credits', label: 'Monthly credits', help: 'Credits per calendar month, UTC (429, code 1102).' },
];

/** Each field: a number (the limit), "unlimited" (null) or "default" (left out: the DEFAULT_* setting). */
type Mode = 'default' | 'unlimited' | 'limit';
type Draft = Record<LimitField, { mode: Mode; value: string }>;

function draftOf(limits: OwnerLimitsDto): Draft {
  const one = (field: LimitField) => ({
    mode: (limits.defaults.includes(field) ? 'default' : limits[field] === null ? 'unlimited' : 'limit') as Mode,
    value: limits[field] === null ? '' : String(limits[field]),
  });
  return { requests_per_minute: one('requests_per_minute'), max_concurrent_tasks: one('max_concurrent_tasks'), monthly_credits: one('monthly_credits') };
}

function LimitsForm({ owner }: { owner: string }): JSX.Element {
  const limits = usePoll<OwnerLimitsDto>(() => call(getOwnerLimits({ path: { owner } })), [owner], null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  // The form starts from the owner's limits and then belongs to the user: a later load (after a save)
  // refreshes what is shown as "Now", never what the user is editing.
  useEffect(() => setDraft(null), [owner]);
  useEffect(() => {
    const loaded = limits.data;
    if (loaded) setDraft((d) => d ?? draftOf(loaded));
  }, [limits.data]);
  const save = async (event: Event) => {
    event.preventDefault();
    if (!draft) return;
    setNotice(null);
    setError(null);
    const body: SetLimitsDto = {};
    for (const { field, label } of LIMITS) {
      const { mode, value } = draft[field];
      if (mode === 'unlimited') body[field] = null;
      else if (mode === 'limit') {
        if (value.trim() === '') {
          setError(new Error(`${label}: enter a whole number, or choose Default or Unlimited`));
          return;
        }
        body[field] = Number(value);
      }
    }
    try {
      const saved = await call(setOwnerLimits({ path: { owner }, body }));
      setNotice(`Limits of ${owner} saved: ${LIMITS.map((l) => `${l.label.toLowerCase()} ${formatLimit(saved[l.field])}`).join(', ')}.`);
      setDraft(draftOf(saved));
      limits.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="limits-h">
      <h2 id="limits-h">Limits</h2>
      <ErrorMessage error={limits.error} title="Could not load the limits" />
      {!draft && limits.loading && <Loading what="limits" />}
      {draft && limits.data && (
        <>
          <p class="help">
            This month ({limits.data.usage.month}): {limits.data.usage.credits_used} credits used, {formatLimit(limits.data.usage.credits_remaining)} left; {limits.data.usage.active_slots} slots held.
          </p>
          <form class="limits" onSubmit={save}>
            {LIMITS.map(({ field, label, help }) => (
              <fieldset key={field}>
                <legend>{label}</legend>
                <p class="help">
                  {help} Now: {formatLimit(limits.data?.[field])}
                  {limits.data?.defaults.includes(field) ? ' (the default)' : ''}.
                </p>
                <div class="field">
                  <label for={`${field}-mode`}>{label}: kind of limit</label>
                  <select id={`${field}-mode`} value={draft[field].mode} onChange={(e) => setDraft({ ...draft, [field]: { ...draft[field], mode: e.currentTarget.value as Mode } })}>
                    <option value="default">Default (the service's setting)</option>
                    <option value="unlimited">Unlimited</option>
                    <option value="limit">A limit</option>
                  </select>
                </div>
                {draft[field].mode === 'limit' && (
                  <div class="field">
                    <label for={`${field}-value`}>{label}</label>
                    <input id={`${field}-value`} type="number" min={0} step={1} inputMode="numeric" value={draft[field].value} onInput={(e) => setDraft({ ...draft, [field]: { ...draft[field], value: e.currentTarget.value } })} />
                  </div>
                )}
              </fieldset>
            ))}
            <div class="actions">
              <button type="submit">Save limits</button>
            </div>
          </form>
        </>
      )}
      <Notice>{notice}</Notice>
      <ErrorMessage error={error} title="Could not save the limits" />
    </section>
  );
}

function WebhookSecret({ owner }: { owner: string }): JSX.Element {
  const secret = usePoll<WebhookSecretDto>(() => call(getWebhookSecret({ path: { owner } })), [owner], null);
  const [shown, setShown] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const rotate = async () => {
    setNotice(null);
    setError(null);
    try {
      const rotated = await call(rotateWebhookSecret({ path: { owner } }));
      setNotice(`The webhook secret of ${owner} was rotated; the previous one also signs until ${formatTime(rotated.previous_expires_at)}.`);
      secret.reload();
    } catch (err) {
      setError(err);
    }
  };
  const s = secret.data;
  return (
    <section aria-labelledby="secret-h">
      <h2 id="secret-h">Webhook secret</h2>
      <ErrorMessage error={secret.error} title="Could not load the webhook secret" />
      {!s && secret.loading && <Loading what="the webhook secret" />}
      {s && (
        <dl class="summary">
          <dt>Secret</dt>
          <dd class="mono" id="webhook-secret">
            {shown ? s.secret : `${s.secret.slice(0, 10)}…`}
          </dd>
          <dt>Rotated</dt>
          <dd>{formatTime(s.rotated_at)}</dd>
          {s.previous_secret && (
            <>
              <dt>Previous secret, still signing until</dt>
              <dd>{formatTime(s.previous_expires_at)}</dd>
            </>
          )}
        </dl>
      )}
      <p class="actions">
        <button type="button" class="secondary" onClick={() => setShown(!shown)} aria-pressed={shown}>
          {shown ? 'Hide the secret' : 'Show the secret'}
        </button>{' '}
        <button type="button" onClick={() => void rotate()}>
          Rotate secret
        </button>
      </p>
      <Notice>{notice}</Notice>
      <ErrorMessage error={error} title="Could not rotate the secret" />
    </section>
  );
}

export function OwnerPage({ owner }: { owner: string }): JSX.Element {
  const keys = usePoll<KeyDto[]>(() => call(listApiKeys({ query: { owner } })), [owner], null);
  return (
    <section>
      <h1 tabIndex={-1}>Owner {owner}</h1>
      <p>
        <Link href="/owners">All owners and keys</Link> · <Link href={`/?owner=${encodeURIComponent(owner)}`}>Tasks</Link>
      </p>
      <LimitsForm owner={owner} />
      <WebhookSecret owner={owner} />
      <CreateKeyForm owner={owner} onCreated={keys.reload} />
      <section aria-labelledby="owner-keys-h">
        <h2 id="owner-keys-h">Keys of {owner}</h2>
        <ErrorMessage error={keys.error} title="Could not load the keys" />
        {keys.loading && !keys.data && <Loading what="keys" />}
        {keys.data && <KeysTable keys={keys.data} onChanged={keys.reload} showOwner={false} />}
      </section>
    </section>
  );
}
