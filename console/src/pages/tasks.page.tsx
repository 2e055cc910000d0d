import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { listTasks } from '../api/sdk.gen';
import type { ListTasksData, TaskPageDto } from '../api/types.gen';
import { ErrorMessage, Loading, StateBadge } from '../components/status.component';
import { call } from '../lib/api.client';
import { DOORS, doorName, formatTime, OPERATIONS, operationName, STATES } from '../lib/format';
import { Link } from '../lib/router';
import type { Session } from '../lib/session.store';
import { usePoll } from '../lib/use-poll.hook';

type Query = NonNullable<ListTasksData['query']>;

interface Filters {
  kind: string;
  state: string;
  door: string;
  model: string;
  owner: string;
  q: string;
  from: string;
  until: string;
}

const NO_FILTERS: Filters = { kind: '', state: '', door: '', model: '', owner: '', q: '', from: '', until: '' };
const PAGE_SIZE = 20;
/** The first page refreshes itself this often, so new tasks and state changes show without a reload. */
const REFRESH_MS = 2000;

/** The day after `day` (YYYY-MM-DD), at 00:00 UTC: "created until" includes the whole day. */
function dayAfter(day: string): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

function toQuery(f: Filters, cursor: string | undefined): Query {
  const query: Query = { limit: PAGE_SIZE };
  if (f.kind) query.kind = f.kind as Query['kind'];
  if (f.state) query.state = f.state as Query['state'];
  if (f.door) query.door = f.door;
  if (f.model.trim()) query.model = f.model.trim();
  if (f.owner.trim()) query.owner = f.owner.trim();
  if (f.q.trim()) query.q = f.q.trim();
  if (f.from) query.created_after = `${f.from}T00:00:00.000Z`;
  if (f.until) query.created_before = dayAfter(f.until);
  if (cursor) query.cursor = cursor;
  return query;
}

export function TasksPage({ session }: { session: Session }): JSX.Element {
  // an admin may arrive with ?owner= (from an owner's page): the list starts filtered on it
  const initial = { ...NO_FILTERS, owner: session.admin ? (new URLSearchParams(window.location.search).get('owner') ?? '') : '' };
  const [draft, setDraft] = useState<Filters>(initial);
  const [filters, setFilters] = useState<Filters>(initial);
  /** The cursors of the pages before this one (empty: the first page). */
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const page = usePoll<TaskPageDto>(() => call(listTasks({ query: toQuery(filters, cursor) })), [filters, cursor], cursor ? null : REFRESH_MS);

  const apply = (event: Event) => {
    event.preventDefault();
    setCursors([]);
    setFilters({ ...draft });
  };
  const clear = () => {
    setDraft(NO_FILTERS);
    setCursors([]);
    setFilters(NO_FILTERS);
  };
  const field = (name: keyof Filters) => ({ value: draft[name], onInput: (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value }) });
  const tasks = page.data?.tasks ?? [];
  /** The models of the tasks seen so far, offered by the model filter (any name may be typed). */
  const [models, setModels] = useState<string[]>([]);
  useEffect(() => {
    const seen = (page.data?.tasks ?? []).map((t) => t.model).filter((m): m is string => !!m);
    if (seen.some((m) => !models.includes(m))) setModels([...new Set([...models, ...seen])].sort());
  }, [page.data]);

  return (
    <section>
      <h1 tabIndex={-1}>Tasks</h1>
      <p class="lead">{session.admin ? 'Tasks of every owner and operation, newest first.' : `Tasks of ${session.owner}, every operation, newest first.`} The first page refreshes itself.</p>
      <form class="filters" role="search" aria-label="Filter tasks" onSubmit={apply}>
        <div class="field">
          <label for="f-kind">Operation</label>
          <select id="f-kind" {...field('kind')}>
            <option value="">All operations</option>
            {Object.entries(OPERATIONS).map(([kind, name]) => (
              <option key={kind} value={kind}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-state">State</label>
          <select id="f-state" {...field('state')}>
            <option value="">All states</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-door">Door</label>
          <select id="f-door" {...field('door')}>
            <option value="">All doors</option>
            {Object.entries(DOORS).map(([door, name]) => (
              <option key={door} value={door}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-model">Model</label>
          <input id="f-model" type="text" list="f-model-seen" autoComplete="off" spellcheck={false} placeholder="Any model" {...field('model')} />
          <datalist id="f-model-seen">
            {models.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </div>
        {session.admin && (
          <div class="field">
            <label for="f-owner">Owner</label>
            <input id="f-owner" type="text" autoComplete="off" spellcheck={false} {...field('owner')} />
          </div>
        )}
        <div class="field">
          <label for="f-q">Task ID or external ID</label>
          <input id="f-q" type="search" autoComplete="off" spellcheck={false} {...field('q')} />
        </div>
        <div class="field">
          <label for="f-from">Created from</label>
          <input id="f-from" type="date" {...field('from')} />
        </div>
        <div class="field">
          <label for="f-until">Created until</label>
          <input id="f-until" type="date" {...field('until')} />
        </div>
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button type="button" class="secondary" onClick={clear}>
            Clear filters
          </button>
        </div>
      </form>

      <ErrorMessage error={page.error} title="Could not load the tasks" />
      {page.loading && !page.data && <Loading what="tasks" />}
      {page.data && tasks.length === 0 && <p class="empty">{cursors.length ? 'No more tasks.' : 'No tasks match these filters.'}</p>}
      {tasks.length > 0 && (
        <div class="table-wrap">
          <table class="tasks">
            <caption>
              Tasks, newest first{cursors.length ? ` (page ${cursors.length + 1})` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Task</th>
                <th scope="col">Operation</th>
                <th scope="col">Door</th>
                <th scope="col">Model</th>
                {session.admin && <th scope="col">Owner</th>}
                <th scope="col">State</th>
                <th scope="col">External ID</th>
                <th scope="col">Created</th>
                <th scope="col">Finished</th>
                <th scope="col">Credits</th>
              </tr>
            </thead>
            <tbody>
              {tasks.map((t) => (
                <tr key={t.id} data-task-id={t.id} data-state={t.state}>
                  <th scope="row">
                    <Link href={`/tasks/${t.id}`} class="mono">
                      {t.id}
                    </Link>
                  </th>
                  <td>{operationName(t.kind)}</td>
                  <td data-col="door">{t.door ? doorName(t.door) : '—'}</td>
                  <td data-col="model" class="mono">{t.model ?? '—'}</td>
                  {session.admin && <td>{t.owner}</td>}
                  <td>
                    <StateBadge state={t.state} status={t.status} />
                  </td>
                  <td class="mono">{t.external_id ?? '—'}</td>
                  <td>
                    <time dateTime={t.created_at}>{formatTime(t.created_at)}</time>
                  </td>
                  <td>{t.finished_at ? <time dateTime={t.finished_at}>{formatTime(t.finished_at)}</time> : '—'}</td>
                  <td>{t.credits}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages of tasks">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={!page.data?.next_cursor} onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}>
          Next page
        </button>
      </nav>
    </section>
  );
}
