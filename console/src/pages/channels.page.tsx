import type { InputHTMLAttributes, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { createChannel, disableChannel, enableChannel, listChannels, listProtocols, testChannel, updateChannel } from '../api/sdk.gen';
import type { ChannelCredentialsDto, ChannelDto, ChannelModelDto, CreateChannelDto, ProtocolDto, UpdateChannelDtoWritable } from '../api/types.gen';
import { ErrorMessage, Loading, Notice } from '../components/status.component';
import { call } from '../lib/api.client';
import { formatTime } from '../lib/format';
import { usePoll } from '../lib/use-poll.hook';

type Protocol = CreateChannelDto['protocol'];

type Operation = CreateChannelDto['operations'][number];
/** Every channel operation, as GET /admin/protocols' vendors serve them (the operation registry): nothing of the form's own. */
function operationsOf(protocols: ProtocolDto[]): Operation[] {
  return [...new Set(protocols.flatMap((p) => p.operations as Operation[]))];
}
type CredentialField = keyof ChannelCredentialsDto;
/** How the form names a credential field. */
const CREDENTIAL_LABELS: Record<CredentialField, string> = { access_key: 'Access key', secret_key: 'Secret key', api_key: 'API key' };

/** What the form knows of a protocol: from GET /admin/protocols (the vendors' descriptors), nothing of its own. */
function protocolOf(protocols: ProtocolDto[], name: string): ProtocolDto | undefined {
  return protocols.find((p) => p.protocol === name);
}

interface ChannelForm {
  name: string;
  operations: Operation[];
  protocol: Protocol;
  base_url: string;
  access_key: string;
  secret_key: string;
  api_key: string;
  weight: string;
  priority: string;
  max_running: string;
  stall_after_s: string;
  /** The models it serves, as JSON ([{name, vendor_model, price}], a declared one with its spec); empty: its vendor's catalog. */
  models: string;
}

const EMPTY: ChannelForm = { name: '', operations: ['expand'], protocol: 'kling', base_url: '', access_key: '', secret_key: '', api_key: '', weight: '100', priority: '0', max_running: '', stall_after_s: '', models: '' };

function formOf(c: ChannelDto): ChannelForm {
  return { ...EMPTY, name: c.name, operations: c.operations as Operation[], protocol: c.protocol as Protocol, base_url: c.base_url, weight: String(c.weight), priority: String(c.priority), max_running: c.max_running === null ? '' : String(c.max_running),
    stall_after_s: c.stall_after_s === null ? '' : String(c.stall_after_s),
    models: c.models.length ? JSON.stringify(c.models, null, 2) : '',
  };
}

/** The credentials typed for the protocol's fields (write-only: never read back); none typed on an edit keeps the stored ones. */
function credentialsOf(f: ChannelForm, protocol: ProtocolDto | undefined): ChannelCredentialsDto | undefined {
  const fields = (protocol?.credentials ?? ['api_key']) as CredentialField[];
  const c: ChannelCredentialsDto = Object.fromEntries(fields.map((field) => [field, f[field] || undefined]));
  return Object.values(c).some((v) => v !== undefined) ? c : undefined;
}

const int = (v: string) => (v.trim() === '' ? undefined : Number(v));

/** The models typed as JSON: an array, or empty for none listed. */
function parseModels(text: string): ChannelModelDto[] {
  if (text.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('Models must be JSON, such as [{"name": "ray-2", "vendor_model": "ray-2"}]');
  }
  if (!Array.isArray(value)) throw new Error('Models must be a JSON array');
  return value as ChannelModelDto[];
}

/**
 * A declared model to start from (a vendor model the gateway's catalog does not know): its spec in the
 * operation's terms, the least a model of it needs, for the operator to complete (the admin API refuses a
 * wrong field by its path, models[i].spec.…, which the form shows).
 */
function declaredTemplate(operation: 'video' | 'image', index: number): ChannelModelDto {
  const spec = operation === 'video' ? { durations: [5, 10], resolutions: ['720p'], aspect_ratios: ['16:9', '9:16'], text_to_video: true, first_frame: true } : { aspect_ratios: ['1:1'], resolutions: ['1k'], max_n: 1 };
  const price = operation === 'video' ? { per_second: { '*': 0.05 } } : { per_image: 0.04 };
  return { name: `declared-${index + 1}`, vendor_model: 'the-vendors-model-id', operation, spec, price } as ChannelModelDto;
}

/** Add (no `channel`) or edit a channel. Credentials are write-only fields: empty on an edit means unchanged. */
function ChannelEditor({ channel, protocols, onDone }: { channel?: ChannelDto; protocols: ProtocolDto[]; onDone(message: string | null): void }): JSX.Element {
  const [form, setForm] = useState<ChannelForm>(channel ? formOf(channel) : EMPTY);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const prefix = channel ? `edit-${channel.id}` : 'new-channel';
  const input = (name: Exclude<keyof ChannelForm, 'operations' | 'models'>, label: string, attrs: InputHTMLAttributes<HTMLInputElement> = {}) => (
    <div class="field">
      <label for={`${prefix}-${name}`}>{label}</label>
      <input id={`${prefix}-${name}`} value={form[name]} onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })} autoComplete="off" spellcheck={false} {...attrs} />
    </div>
  );
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const models = parseModels(form.models);
      const common = {
        name: form.name.trim(),
        protocol: form.protocol,
        base_url: form.base_url.trim(),
        weight: int(form.weight),
        priority: int(form.priority),
        max_running: form.max_running.trim() === '' ? null : Number(form.max_running),
        stall_after_s: form.stall_after_s.trim() === '' ? null : Number(form.stall_after_s),
        models,
      };
      if (channel) {
        const body: UpdateChannelDtoWritable = { ...common, operations: form.operations };
        const credentials = credentialsOf(form, protocolOf(protocols, form.protocol));
        if (credentials) body.credentials = credentials;
        if (channel.protocol === form.protocol && channel.base_url === body.base_url && !credentials) {
          delete body.protocol;
          delete body.base_url;
        }
        const saved = await call(updateChannel({ path: { id: channel.id }, body }));
        onDone(`Channel ${saved.name} saved.`);
      } else {
        const saved = await call(createChannel({ body: { ...common, operations: form.operations, credentials: credentialsOf(form, protocolOf(protocols, form.protocol)) ?? {} } }));
        onDone(`Channel ${saved.name} added (${saved.status}).`);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="channel-form" onSubmit={submit} aria-label={channel ? `Edit channel ${channel.name}` : 'Add a channel'}>
      {input('name', 'Name', { required: true })}
      <div class="field">
        <label for={`${prefix}-protocol`}>Protocol</label>
        <select
          id={`${prefix}-protocol`}
          value={form.protocol}
          onChange={(e) => {
            const protocol = e.currentTarget.value as Protocol;
            const takes = (protocolOf(protocols, protocol)?.operations ?? operationsOf(protocols)) as Operation[];
            const allowed = form.operations.filter((o) => takes.includes(o));
            setForm({ ...form, protocol, operations: allowed.length ? allowed : [takes[0]] });
          }}
        >
          {protocols.map((p) => (
            <option key={p.protocol} value={p.protocol}>
              {`${p.protocol} (${p.title}${p.makes ? `: ${p.makes}` : ''}; ${p.groups.map((g) => g.join(' and ')).join(', or ')}; ${p.credentials.map((c) => CREDENTIAL_LABELS[c as CredentialField] ?? c).join(' and ')})`}
            </option>
          ))}
        </select>
      </div>
      <fieldset>
        <legend>Operations</legend>
        {operationsOf(protocols).filter((o) => (protocolOf(protocols, form.protocol)?.operations ?? operationsOf(protocols)).includes(o)).map((o) => (
          <label key={o} class="check">
            <input
              type="checkbox"
              checked={form.operations.includes(o)}
              onChange={(e) => setForm({ ...form, operations: e.currentTarget.checked ? [...form.operations, o] : form.operations.filter((x) => x !== o) })}
            />{' '}
            {o}
          </label>
        ))}
      </fieldset>
      {input('base_url', 'Base URL', { type: 'url', required: true, placeholder: protocolOf(protocols, form.protocol)?.base_url.example ?? '' })}
      <fieldset>
        <legend>Credentials (write-only{channel ? ': leave empty to keep the stored ones' : ''})</legend>
        {((protocolOf(protocols, form.protocol)?.credentials ?? ['api_key']) as CredentialField[]).map((field) => input(field, CREDENTIAL_LABELS[field] ?? field, { type: 'password' }))}
      </fieldset>
      {input('weight', 'Weight (0–1000)', { type: 'number', min: 0, max: 1000 })}
      {input('priority', 'Priority (−1000–1000, higher first)', { type: 'number', min: -1000, max: 1000 })}
      {input('max_running', 'Tasks at once (empty: no cap)', { type: 'number', min: 1 })}
      {input('stall_after_s', 'Give up an upstream task still working after (s; empty: no limit)', { type: 'number', min: 1, max: 86400 })}
      <div class="field">
        <label for={`${prefix}-models`}>
          Models (JSON: [{'{'}"name", "vendor_model", "price": {'{'}"per_second": {'{'}"720p": 0.1{'}'}{'}'} or {'{'}"per_image": 0.04{'}'}{'}'}]; empty: the vendor's catalog). A model the catalog does not know
          is declared with a "spec" of what it can do (video: durations, resolutions, aspect_ratios, first_frame, last_frame, reference_images, audio, seed …; image: aspect_ratios, resolutions, sizes, max_n …)
        </label>
        <textarea id={`${prefix}-models`} rows={form.models.split('\n').length > 4 ? 12 : 4} value={form.models} onInput={(e) => setForm({ ...form, models: e.currentTarget.value })} spellcheck={false} />
        {(['video', 'image'] as const)
          .filter((op) => form.operations.includes(op))
          .map((op) => (
            <button
              key={op}
              type="button"
              class="secondary"
              onClick={() => {
                try {
                  const models = parseModels(form.models);
                  setForm({ ...form, models: JSON.stringify([...models, declaredTemplate(op, models.length)], null, 2) });
                } catch (err) {
                  setError(err);
                }
              }}
            >
              Declare a {op} model
            </button>
          ))}
      </div>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {channel ? 'Save channel' : 'Add channel'}
        </button>
        {channel && (
          <button type="button" class="secondary" onClick={() => onDone(null)}>
            Cancel
          </button>
        )}
      </div>
      <ErrorMessage error={error} title={channel ? 'Could not save the channel' : 'Could not add the channel'} />
    </form>
  );
}

export function ChannelsPage(): JSX.Element {
  const channels = usePoll<ChannelDto[]>(() => call(listChannels()), [], 10_000);
  const protocols = usePoll<ProtocolDto[]>(() => call(listProtocols()), [], null);
  const [editing, setEditing] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const act = async (what: string, action: () => Promise<string>) => {
    setNotice(null);
    setError(null);
    try {
      setNotice(await action());
      channels.reload();
    } catch (err) {
      setError(Object.assign(err instanceof Error ? err : new Error(String(err)), { action: what }));
    }
  };
  const done = (message: string | null) => {
    setEditing(null);
    if (message) setNotice(message);
    channels.reload();
  };
  return (
    <section>
      <h1 tabIndex={-1}>Channels</h1>
      <p class="lead">Upstream accounts for every relayed operation: their health, and what to do with them. Credentials are write-only: only their last 4 characters are shown.</p>
      <Notice>{notice}</Notice>
      <ErrorMessage error={error} title="The action failed" />
      <ErrorMessage error={channels.error} title="Could not load the channels" />
      {!channels.data && channels.loading && <Loading what="channels" />}
      {channels.data && channels.data.length === 0 && <p class="empty">No channels yet: add one below.</p>}
      {channels.data?.map((c) => (
        <article class="channel" key={c.id} aria-labelledby={`channel-${c.id}`}>
          <h2 id={`channel-${c.id}`}>{c.name}</h2>
          <dl class="summary">
            <dt>Status</dt>
            <dd>
              {c.status}
              {c.status_reason ? ` (${c.status_reason})` : ''}
            </dd>
            <dt>Operations</dt>
            <dd>{c.operations.join(', ')}</dd>
            <dt>Circuit</dt>
            <dd>
              {c.health.state}
              {c.health.open_until ? ` until ${formatTime(c.health.open_until)}` : ''} · {c.health.consecutive_failures} failures in a row
            </dd>
            <dt>Last 5 minutes</dt>
            <dd>
              {c.health.requests_5m} requests
              {c.health.success_rate_5m !== null ? ` · ${Math.round(c.health.success_rate_5m * 100)} % answered` : ''}
              {c.health.p50_latency_ms_5m !== null ? ` · p50 ${c.health.p50_latency_ms_5m} ms` : ''}
            </dd>
            <dt>Running tasks</dt>
            <dd>
              {c.running_tasks}
              {c.max_running !== null ? ` of ${c.max_running}` : ''}
            </dd>
            <dt>Models</dt>
            <dd>
              {c.models.length === 0
                ? "its vendor's catalog"
                : c.models.map((m, i) => (
                    <span key={m.name}>
                      {i > 0 ? ', ' : ''}
                      {m.name}
                      {m.name !== m.vendor_model ? ` (${m.vendor_model})` : ''}
                      {m.spec ? ` · declared ${m.operation ?? ''} model` : ''}
                    </span>
                  ))}
            </dd>
            <dt>Last error</dt>
            <dd>{c.last_error ? `${c.last_error} (${formatTime(c.last_error_at)})` : '—'}</dd>
            <dt>Upstream</dt>
            <dd>
              {c.protocol} · <span class="mono">{c.base_url}</span> · weight {c.weight}, priority {c.priority} · credentials{' '}
              {Object.entries(c.credentials)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ') || '—'}
              {c.source === 'config' ? ' · from the configuration (RELAY_<OP>_URL)' : ''}
            </dd>
          </dl>
          <p class="actions">
            {c.status === 'enabled' ? (
              <button type="button" class="secondary" onClick={() => void act('disable', async () => `Channel ${(await call(disableChannel({ path: { id: c.id } }))).name} disabled.`)}>
                Disable {c.name}
              </button>
            ) : (
              <button type="button" class="secondary" onClick={() => void act('enable', async () => `Channel ${(await call(enableChannel({ path: { id: c.id } }))).name} enabled.`)}>
                Enable {c.name}
              </button>
            )}{' '}
            <button
              type="button"
              class="secondary"
              onClick={() =>
                void act('test', async () => {
                  const result = await call(testChannel({ path: { id: c.id } }));
                  return `Test of ${c.name}: ${result.ok ? 'passed' : 'failed'} (${result.status_code ?? 'no answer'}, ${result.latency_ms} ms): ${result.message}`;
                })
              }
            >
              Test {c.name}
            </button>{' '}
            {c.source !== 'config' && (
              <button type="button" class="secondary" onClick={() => setEditing(editing === c.id ? null : c.id)} aria-expanded={editing === c.id}>
                Edit {c.name}
              </button>
            )}
          </p>
          {editing === c.id && <ChannelEditor channel={c} protocols={protocols.data ?? []} onDone={done} />}
        </article>
      ))}
      <section aria-labelledby="add-channel-h">
        <h2 id="add-channel-h">Add a channel</h2>
        <ChannelEditor key={notice ?? 'new'} protocols={protocols.data ?? []} onDone={done} />
      </section>
    </section>
  );
}
