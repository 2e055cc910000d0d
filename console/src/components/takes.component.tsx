import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { TaskClipDto, TaskClipLinkDto, TaskMediaDto } from '../api/types.gen';
import { formatBytes } from '../lib/format';
import { Link } from '../lib/router';

/** Media roles a clip's files have: its audio and its cover, at the clip's index. */
export const CLIP_ROLES = ['clip', 'cover'];

/** Seconds as m:ss.s (a word's time, a cut). */
export function formatSeconds(s: number): string {
  const minutes = Math.floor(s / 60);
  const rest = s - minutes * 60;
  return `${minutes}:${rest.toFixed(1).padStart(4, '0')}`;
}

/**
 * A music, concat or upload task's clips, one article each: its title, its audio to play, its cover, what it
 * continues or joins (each clip linking to the task that made it), its lyrics, and its words with their times
 * (the word being sung marked while it plays).
 */
export function Takes({ clips, media }: { clips: TaskClipDto[]; media: TaskMediaDto[] }): JSX.Element {
  return (
    <div class="takes">
      {clips.map((clip, i) => (
        <Take
          key={clip.id}
          clip={clip}
          place={clips.length > 1 ? i + 1 : null}
          audio={media.find((m) => m.role === 'clip' && m.index === clip.index)}
          cover={media.find((m) => m.role === 'cover' && m.index === clip.index)}
        />
      ))}
    </div>
  );
}

const TYPE_NAMES: Record<string, string> = { gen: 'Take', upload: 'Upload', concat: 'Joined song' };

function Take({ clip, place, audio, cover }: { clip: TaskClipDto; place: number | null; audio?: TaskMediaDto; cover?: TaskMediaDto }): JSX.Element {
  const [at, setAt] = useState<number | null>(null);
  const name = `${TYPE_NAMES[clip.type] ?? clip.type}${place !== null ? ` ${place}` : ''}`;
  const heading = clip.title ? `${name}: ${clip.title}` : name;
  const words = clip.timed_lyrics ?? [];
  const sung = at === null ? -1 : words.findIndex((w) => w.start_s <= at && at < w.end_s);
  return (
    <article class="take" data-clip-id={clip.id} aria-labelledby={`take-${clip.id}`}>
      <h3 id={`take-${clip.id}`}>{heading}</h3>
      <p class="meta">
        Clip <span class="mono">{clip.id}</span>
        {clip.duration !== null ? ` · ${clip.duration.toFixed(1)} s` : ''}
      </p>
      {audio ? (
        <figure class="media">
          <audio
            src={audio.url}
            controls
            preload="metadata"
            aria-label={`Play ${heading}`}
            onTimeUpdate={(e) => setAt((e.currentTarget as HTMLAudioElement).currentTime)}
          />
          <figcaption>
            {audio.content_type}, {formatBytes(audio.size_bytes)} ·{' '}
            <a href={audio.url} target="_blank" rel="noopener noreferrer">
              Open the file
            </a>
          </figcaption>
        </figure>
      ) : (
        <p class="empty">No audio (not made yet, or removed by retention).</p>
      )}
      {cover && <img class="cover" src={cover.url} alt={`Cover of ${heading}`} loading="lazy" />}
      <Lineage clip={clip} />
      {clip.lyrics ? (
        <section class="lyrics" aria-label={`Lyrics of ${heading}`}>
          <h4>Lyrics</h4>
          <p class="lyrics-text">{clip.lyrics}</p>
        </section>
      ) : (
        clip.type === 'gen' && <p class="empty">No lyrics: an instrumental, or its model reported none.</p>
      )}
      {words.length > 0 && (
        <details class="timed-lyrics">
          <summary>Words with their times ({words.length})</summary>
          <ol class="timed-words">
            {words.map((w, i) => (
              <li key={i} class={i === sung ? 'sung' : undefined} aria-current={i === sung ? 'true' : undefined}>
                <time>{formatSeconds(w.start_s)}</time> {w.word}
              </li>
            ))}
          </ol>
        </details>
      )}
    </article>
  );
}

/** Where a clip comes from: the clip it continues and from which second, or a joined song's parts with their cuts. */
function Lineage({ clip }: { clip: TaskClipDto }): JSX.Element | null {
  if (!clip.continues && clip.parts.length === 0) return null;
  return (
    <div class="lineage">
      {clip.continues && (
        <p class="continues">
          Continues <ClipLink link={clip.continues} /> from {formatSeconds(clip.continues.at_s ?? 0)}
          {clip.continues.at_s === null ? ' (its end)' : ''}.
        </p>
      )}
      {clip.parts.length > 0 && (
        <>
          <p>Joins, in order:</p>
          <ol class="parts">
            {clip.parts.map((part, i) => (
              <li key={i}>
                <ClipLink link={part} /> {part.at_s === null ? 'whole' : `up to ${formatSeconds(part.at_s)}`}
              </li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}

function ClipLink({ link }: { link: TaskClipLinkDto }): JSX.Element {
  const id = <span class="mono">{link.clip_id}</span>;
  return link.task_id ? (
    <>
      clip {id} of <Link href={`/tasks/${link.task_id}`}>task {link.task_id}</Link>
    </>
  ) : (
    <>clip {id} (its task was deleted)</>
  );
}
