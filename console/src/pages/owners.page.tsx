import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { createApiKey, listApiKeys, revokeApiKey } from '../api/sdk.gen';
import type { CreatedKeyDto, KeyDto } from '../api/types.gen';
import { ErrorMessage, Loading, Notice } from '../components/status.component';
import { call } from '../lib/api.client';
import { formatTime } from '../lib/format';
import { Link, navigate } from '../lib/router';
import { usePoll } from '../lib/use-poll.hook';

/** The keys of one owner or of all, each revocable. */
export function KeysTable({ keys, onChanged, showOwner }: { keys: KeyDto[]; onChanged(): void; showOwner: boolean }): JSX.Element {
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const revoke = async (key: KeyDto) => {
    setNotice(null);
    setError(null);
    try {
      const revoked = await call(revokeApiKey({ path: { id: key.id } }));
      setNotice(`Key ${revoked.prefix}… (${revoked.name}) of ${revoked.owner} is revoked: it stops working within seconds.`);
      onChanged();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <Notice>{notice}</Notice>
      <ErrorMessage error={error} title="Could not revoke the key" />
      {keys.length === 0 ? (
        <p class="empty">No keys.</p>
      ) : (
        <div class="table-wrap">
          <table class="keys">
            <caption>API keys, newest first (the secret is never shown again)</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                {showOwner && <th scope="col">Owner</th>}
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <th scope="row" class="mono">
                    {k.prefix}…
                  </th>
                  <td>{k.name}</td>
                  {showOwner && (
                    <td>
                      <Link href={`/owners/${encodeURIComponent(k.owner)}`}>{k.owner}</Link>
                    </td>
                  )}
                  <td>{formatTime(k.created_at)}</td>
                  <td>{formatTime(k.last_used_at)}</td>
                  <td>{k.revoked_at ? `revoked ${formatTime(k.revoked_at)}` : 'active'}</td>
                  <td>
                    {!k.revoked_at && (
                      <button type="button" class="danger" onClick={() => void revoke(k)} aria-label={`Revoke key ${k.prefix} (${k.name}) of ${k.owner}`}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** Create a key for an owner: the answer is the only time the key is shown. */
export function CreateKeyForm({ owner: fixedOwner, onCreated }: { owner?: string; onCreated(): void }): JSX.Element {
  const [owner, setOwner] = useState(fixedOwner ?? '');
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedKeyDto | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setCreated(null);
    try {
      setCreated(await call(createApiKey({ body: { owner: (fixedOwner ?? owner).trim(), name: name.trim() } })));
      setName('');
      onCreated();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="create-key-h">
      <h2 id="create-key-h">Create a key</h2>
      <form class="inline-form" onSubmit={submit}>
        {!fixedOwner && (
          <div class="field">
            <label for="new-key-owner">Owner</label>
            <input id="new-key-owner" type="text" autoComplete="off" spellcheck={false} value={owner} onInput={(e) => setOwner(e.currentTarget.value)} required />
          </div>
        )}
        <div class="field">
          <label for="new-key-name">Key name</label>
          <input id="new-key-name" type="text" autoComplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        </div>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Create key
          </button>
        </div>
      </form>
      <ErrorMessage error={error} title="Could not create the key" />
      {created && (
        <div class="new-key" role="status">
          <p>
            New key for <strong>{created.owner}</strong> ({created.name}). Copy it now: it is shown only this once.
          </p>
          <p>
            <label for="new-key-value">New API key</label>
            <input id="new-key-value" class="mono" type="text" readOnly value={created.key} onFocus={(e) => e.currentTarget.select()} />
          </p>
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have copied it: hide the key
          </button>
        </div>
      )}
    </section>
  );
}

export function OwnersPage(): JSX.Element {
  const keys = usePoll<KeyDto[]>(() => call(listApiKeys()), [], null);
  const [openOwner, setOpenOwner] = useState('');
  const owners = [...new Set((keys.data ?? []).map((k) => k.owner))].sort();
  return (
    <section>
      <h1 tabIndex={-1}>Owners and keys</h1>
      <CreateKeyForm onCreated={keys.reload} />
      <section aria-labelledby="owners-h">
        <h2 id="owners-h">Owners</h2>
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (openOwner.trim()) navigate(`/owners/${encodeURIComponent(openOwner.trim())}`);
          }}
        >
          <div class="field">
            <label for="open-owner">Open an owner (limits, webhook secret)</label>
            <input id="open-owner" type="text" autoComplete="off" value={openOwner} onInput={(e) => setOpenOwner(e.currentTarget.value)} list="owner-names" />
            <datalist id="owner-names">
              {owners.map((o) => (
                <option key={o} value={o} />
              ))}
            </datalist>
          </div>
          <div class="actions">
            <button type="submit">Open owner</button>
          </div>
        </form>
        {owners.length > 0 && (
          <ul class="owners">
            {owners.map((o) => (
              <li key={o}>
                <Link href={`/owners/${encodeURIComponent(o)}`}>{o}</Link> ({(keys.data ?? []).filter((k) => k.owner === o && !k.revoked_at).length} active keys)
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="keys-h">
        <h2 id="keys-h">Keys</h2>
        <ErrorMessage error={keys.error} title="Could not load the keys" />
        {keys.loading && !keys.data && <Loading what="keys" />}
        {keys.data && <KeysTable keys={keys.data} onChanged={keys.reload} showOwner />}
      </section>
    </section>
  );
}
