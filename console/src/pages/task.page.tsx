import { Fragment, type JSX } from 'preact';
import { useState } from 'preact/hooks';
import { getTask, listTaskAttempts, listTaskCallbacks, redeliverCallback } from '../api/sdk.gen';
import type { CallbackDeliveryDto, TaskAttemptDto, TaskDetailDto, TaskMediaDto } from '../api/types.gen';
import { ErrorMessage, Loading, Notice, StateBadge } from '../components/status.component';
import { CLIP_ROLES, Takes } from '../components/takes.component';
import { call, getPath } from '../lib/api.client';
import { doorName, formatBilled, formatBytes, formatTime, isFinal, operationName } from '../lib/format';
import { type RequestRow, requestView } from '../lib/request';
import { Link } from '../lib/router';
import type { Session } from '../lib/session.store';
import { usePoll } from '../lib/use-poll.hook';

interface TaskView {
  task: TaskDetailDto;
  deliveries: CallbackDeliveryDto[];
  attempts: TaskAttemptDto[] | null;
  /** The record as the operation's own route answers it (an API key), or as GET /tasks/{id} carries it (the admin key). */
  record: { source: string; body: unknown };
}

/** While the task runs or a notification is still being delivered, the page refreshes itself this often. */
const REFRESH_MS = 2000;

async function loadTask(session: Session, id: string): Promise<TaskView> {
  const [task, callbacks, attempts] = await Promise.all([
    call(getTask({ path: { id } })),
    call(listTaskCallbacks({ path: { id } })),
    session.admin ? call(listTaskAttempts({ path: { id } })) : Promise.resolve(null),
  ]);
  let record: TaskView['record'] = { source: 'GET /tasks/{id} (record)', body: task.record };
  if (!session.admin && task.record_path) {
    // a team key reads the record from the operation's own route, exactly as that route answers it
    record = { source: `GET ${task.record_path}`, body: await getPath(task.record_path) };
  }
  return { task, deliveries: callbacks.deliveries, attempts, record };
}

export function TaskPage({ session, id }: { session: Session; id: string }): JSX.Element {
  const view = usePoll(() => loadTask(session, id), [id, session.key], REFRESH_MS, (v) => !isFinal(v.task.state) || v.deliveries.some((d) => d.state === 'pending'));
  const [notice, setNotice] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);

  const redeliver = async (delivery: CallbackDeliveryDto) => {
    setNotice(null);
    setActionError(null);
    try {
      await call(redeliverCallback({ path: { id: delivery.id } }));
      setNotice(`The "${delivery.status}" notification is being delivered again.`);
      view.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  if (!view.data) {
    return (
      <section>
        <h1 tabIndex={-1}>Task {id}</h1>
        <p>
          <Link href="/">Back to tasks</Link>
        </p>
        <ErrorMessage error={view.error} title="Could not load the task" />
        {view.loading && <Loading what="the task" />}
      </section>
    );
  }
  const { task, deliveries, attempts, record } = view.data;
  return (
    <section>
      <h1 tabIndex={-1}>
        Task <span class="mono">{task.id}</span>
      </h1>
      <p>
        <Link href="/">Back to tasks</Link>
      </p>
      <ErrorMessage error={view.error} title="Could not refresh the task" />

      <section aria-labelledby="summary-h">
        <h2 id="summary-h">Summary</h2>
        <dl class="summary">
          <dt>Operation</dt>
          <dd>{operationName(task.kind)}</dd>
          <dt>Door</dt>
          <dd id="task-door">{task.door ? doorName(task.door) : '—'}</dd>
          <dt>Owner</dt>
          <dd>{task.owner}</dd>
          <dt>State</dt>
          <dd id="task-state">
            <StateBadge state={task.state} status={task.status} />
          </dd>
          <dt>External ID</dt>
          <dd class="mono">{task.external_id ?? '—'}</dd>
          <dt>Credits</dt>
          <dd>{task.credits}</dd>
          {task.message && (
            <>
              <dt>Reason</dt>
              <dd>{task.message}</dd>
            </>
          )}
        </dl>
      </section>

      <section aria-labelledby="timeline-h">
        <h2 id="timeline-h">Timeline</h2>
        <ol class="timeline">
          {task.timeline.map((e) => (
            <li key={e.state}>
              <StateBadge state={e.state} status={e.status} /> <time dateTime={e.at}>{formatTime(e.at)}</time>
            </li>
          ))}
          {!isFinal(task.state) && <li class="pending">Not finished yet: this page refreshes itself.</li>}
        </ol>
      </section>

      <div class="asked-made">
        <RequestSection task={task} />

        <section aria-labelledby="media-h">
          <h2 id="media-h">Result</h2>
          {task.media_expired ? (
            <p class="empty">The media was removed by retention.</p>
          ) : task.media.length === 0 ? (
            <p class="empty">{isFinal(task.state) ? 'This task has no media.' : 'The media appears here when the task succeeds.'}</p>
          ) : (
            <>
              {/* a song's takes (a joined song, an upload): each plays with its title, lyrics and lineage */}
              {task.clips.length > 0 && <Takes clips={task.clips} media={task.media} />}
              <div class="media-grid">
                {task.media
                  .filter((m) => task.clips.length === 0 || !CLIP_ROLES.includes(m.role))
                  .sort((a, b) => mediaRank(a) - mediaRank(b))
                  .map((m) => (
                    <MediaItem key={m.id} media={m} />
                  ))}
              </div>
            </>
          )}
        </section>
      </div>

      {attempts && (
        <section aria-labelledby="attempts-h">
          <h2 id="attempts-h">Upstream attempts</h2>
          {attempts.length === 0 ? (
            <p class="empty">No create request was sent to an upstream channel (a sandbox task, or one not yet sent).</p>
          ) : (
            <table>
              <caption>Create requests sent upstream, in order</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Model</th>
                  <th scope="col">Upstream cost</th>
                  <th scope="col">Vendor billed</th>
                  <th scope="col">Billed cost</th>
                  <th scope="col">Upstream's words</th>
                </tr>
              </thead>
              <tbody>
                {attempts.map((a, i) => (
                  <tr key={i}>
                    <td>
                      <time dateTime={a.at}>{formatTime(a.at)}</time>
                    </td>
                    <td>{a.channel ?? 'RELAY_EXPAND_URL'}</td>
                    <td>{a.outcome}</td>
                    <td>{a.model ?? '—'}</td>
                    <td>{a.cost ?? '—'}</td>
                    <td>{a.billed_unit && a.billed_amount !== null ? formatBilled({ [a.billed_unit]: a.billed_amount }) : '—'}</td>
                    <td>
                      {a.billed_cost ?? '—'}
                      {a.billing_mismatch && (
                        <>
                          {' '}
                          <strong class="mismatch">beyond tolerance</strong>
                        </>
                      )}
                    </td>
                    <td>{a.message ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}

      <section aria-labelledby="callbacks-h">
        <h2 id="callbacks-h">Callback deliveries</h2>
        <Notice>{notice}</Notice>
        <ErrorMessage error={actionError} title="Could not redeliver" />
        {deliveries.length === 0 ? (
          <p class="empty">No notifications: the task was submitted without a callback_url.</p>
        ) : (
          deliveries.map((d) => (
            <article class="delivery" key={d.id} data-delivery-id={d.id} aria-labelledby={`delivery-${d.id}`}>
              <h3 id={`delivery-${d.id}`}>
                Notification “{d.status}”: {d.state}
              </h3>
              <p class="meta">
                To <span class="mono">{d.url}</span> · webhook-id <span class="mono">{d.id}</span> · {d.attempts} attempt{d.attempts === 1 ? '' : 's'} in the current cycle
                {d.last_error ? ` · last error: ${d.last_error}` : ''}
              </p>
              {session.admin && (
                <p>
                  <button type="button" onClick={() => void redeliver(d)} aria-label={`Redeliver the “${d.status}” notification`}>
                    Redeliver
                  </button>
                </p>
              )}
              {d.attempt_log.length === 0 ? (
                <p class="empty">Not attempted yet.</p>
              ) : (
                <table class="attempts">
                  <caption>Attempts of the “{d.status}” notification</caption>
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">HTTP status</th>
                      <th scope="col">Duration</th>
                      <th scope="col">Error</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.attempt_log.map((a, i) => (
                      <tr key={i}>
                        <td>
                          <time dateTime={a.attempted_at}>{formatTime(a.attempted_at)}</time>
                        </td>
                        <td>{a.status_code ?? 'no answer'}</td>
                        <td>{a.duration_ms} ms</td>
                        <td>{a.error ?? '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </article>
          ))
        )}
      </section>

      <section aria-labelledby="record-h">
        <h2 id="record-h">Record</h2>
        <p class="help">
          As <span class="mono">{record.source}</span> answers it.
        </p>
        <pre class="record" tabIndex={0} aria-label="The task's record, as JSON">
          {JSON.stringify(record.body, null, 2)}
        </pre>
      </section>
    </section>
  );
}

/**
 * What the task asked, in the gateway's words whatever door it came through: the prompt or text, the model, the
 * shape, a voice, lyrics and style, the images it gave (thumbnails of its input media, each linking to its file;
 * images given by URL as links), and every other field by name.
 */
function RequestSection({ task }: { task: TaskDetailDto }): JSX.Element {
  const view = requestView(task.request);
  const rows = (list: RequestRow[], id?: string) => (
    <dl class="summary request" id={id}>
      {list.map((r) => (
        <Fragment key={r.label}>
          <dt>{r.label}</dt>
          <dd class={r.text ? 'asked-text' : undefined}>{r.value}</dd>
        </Fragment>
      ))}
    </dl>
  );
  return (
    <section aria-labelledby="request-h">
      <h2 id="request-h">Request</h2>
      <p class="help">
        What it asked{task.door ? `, through the ${doorName(task.door)} door` : ''}, in the gateway's own words.
      </p>
      {view.main.length > 0 ? rows(view.main, 'request-main') : <p class="empty">It asked nothing beyond its operation's defaults.</p>}
      {task.inputs.length > 0 && (
        <div class="thumbs" aria-label="The images it gave">
          {task.inputs.map((m) => (
            <figure class="thumb" key={m.id} data-role={m.role}>
              <a href={m.url} target="_blank" rel="noopener noreferrer" aria-label={`Open ${inputLabel(m)}`}>
                {m.content_type.startsWith('image/') ? <img src={m.url} alt={inputLabel(m)} loading="lazy" /> : <span>{m.content_type}</span>}
              </a>
              <figcaption>{inputLabel(m)}</figcaption>
            </figure>
          ))}
        </div>
      )}
      {task.inputs.length === 0 && task.media_expired && view.linked.length === 0 && <p class="empty">Its input images were removed by retention.</p>}
      {view.linked.length > 0 && (
        <ul class="linked-images" aria-label="Images it named by address">
          {view.linked.map((r) => (
            <li key={r.label}>
              {r.label}: {/^https?:\/\//.test(r.value) ? <a href={r.value} target="_blank" rel="noopener noreferrer nofollow" class="mono">{r.value}</a> : r.value}
            </li>
          ))}
        </ul>
      )}
      {view.other.length > 0 && (
        <details>
          <summary>Every other field it asked ({view.other.length})</summary>
          {rows(view.other)}
        </details>
      )}
    </section>
  );
}

/** An input's role as the gateway names it (frame0, ref1, input, mask, fit0), with its place when there are several. */
function inputLabel(m: TaskMediaDto): string {
  return /\d$/.test(m.role) || m.index === 0 ? m.role : `${m.role} ${m.index}`;
}

/** Videos and audio first (the result), then images (thumbnails and covers come after). */
function mediaRank(m: TaskMediaDto): number {
  const kind = m.content_type.split('/')[0];
  return (kind === 'video' ? 0 : kind === 'audio' ? 1 : m.role === 'thumbnail' || m.role === 'cover' ? 3 : 2) * 1000 + m.index;
}

function MediaItem({ media }: { media: TaskMediaDto }): JSX.Element {
  const label = `${media.role} ${media.index + 1} (${media.content_type}, ${formatBytes(media.size_bytes)})`;
  let element: JSX.Element;
  if (media.content_type.startsWith('image/')) element = <img src={media.url} alt={`Result ${label}`} loading="lazy" />;
  else if (media.content_type.startsWith('video/')) element = <video src={media.url} controls preload="metadata" aria-label={`Video ${label}`} />;
  // raw PCM has no header a browser could play it by: said, and left to the link
  else if (media.content_type === 'audio/pcm') element = <p>Raw PCM (16-bit little-endian mono at 24 kHz): no player reads it; open the file to download it.</p>;
  else if (media.content_type.startsWith('audio/')) element = <audio src={media.url} controls preload="metadata" aria-label={`Audio ${label}`} />;
  else element = <p>No preview for {media.content_type}.</p>;
  return (
    <figure class="media">
      {element}
      <figcaption>
        {label} ·{' '}
        <a href={media.url} target="_blank" rel="noopener noreferrer">
          Open the file
        </a>
      </figcaption>
    </figure>
  );
}
