import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Clip } from '../../generated/prisma/client.js';
import type { TaskState, TaskTx } from '../../common/tasks/task-kind.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type DetailRows, snakeColumns } from '../../infra/prisma/statement.js';
import type { TimedWord } from './clip-lyrics.js';
import type { ClipType } from './clip-media.js';

/** A clip as its task is accepted (its duration comes with the task's success). */
export interface NewClip {
  id: string;
  taskId: string;
  owner: string;
  idx: number;
  type: ClipType;
  parentId?: string | null;
  continueAt?: number | null;
}

/**
 * What a success learned of a clip: its duration read from the file, the upstream's id of it (relay), and its
 * words where its maker gave them: its title, its lyrics, its lyrics timed word by word.
 */
export interface ClipEnd extends NewClip {
  duration: number;
  upstreamId?: string | null;
  title?: string | null;
  lyrics?: string | null;
  timedLyrics?: TimedWord[] | null;
}

/** A clip with what its task says of it: whether it is complete, whether its audio was removed by retention. */
export interface OwnedClip {
  id: string;
  taskId: string;
  kind: string;
  type: ClipType;
  idx: number;
  state: TaskState;
  parentId: string | null;
  continueAt: number | null;
  duration: number | null;
  /** The upstream's id of the clip (a relayed take, or a relayed upload's own id). */
  upstreamId: string | null;
  /** The upstream channel its task went to (relay): the account that knows upstreamId. */
  channelId: string | null;
  /** The upstream's id of the task that made it (relay): what a vendor naming a clip by its task and its own id needs (an aggregator's vocal removal). */
  taskUpstreamId: string | null;
  mediaExpired: boolean;
  /** Its audio is in the media store (a relayed upload's copy may be missing). */
  audioStored: boolean;
  /** Its task's parameters (a music task's title, tags, model…). */
  params: Record<string, unknown>;
}

/** A clip with its words: its title and lyrics (its maker's, else its task's), its lyrics timed word by word (null: none kept). */
export interface ClipWords extends OwnedClip {
  title: string | null;
  lyrics: string | null;
  timedLyrics: TimedWord[] | null;
}

/** One ancestor of a clip: its id and type, and the second it was cut at by the next clip of the chain. */
export interface Ancestor {
  id: string;
  type: ClipType;
  cutAt: number | null;
}

interface OwnedClipRow {
  id: string;
  task_id: string;
  kind: string;
  type: ClipType;
  idx: number;
  state: TaskState;
  parent_id: string | null;
  continue_at: number | null;
  duration: number | null;
  upstream_id: string | null;
  channel_id: string | null;
  task_upstream_id: string | null;
  media_expired: boolean;
  audio_stored: boolean;
  params: Record<string, unknown>;
}

const OWNED_COLUMNS = `c.id, c.task_id, t.kind, c.type, c.idx, t.state, c.parent_id, c.continue_at, c.duration,
  COALESCE(c.upstream_id, CASE WHEN c.type = 'upload' THEN t.upstream_id END) AS upstream_id, t.channel_id, t.upstream_id AS task_upstream_id, t.media_expired_at IS NOT NULL AS media_expired, t.params,
  EXISTS (SELECT 1 FROM media m WHERE m.task_id = c.task_id AND m.role = 'clip' AND m.index = c.idx) AS audio_stored`;

function owned(row: OwnedClipRow): OwnedClip {
  return {
    id: row.id,
    taskId: row.task_id,
    kind: row.kind,
    type: row.type,
    idx: row.idx,
    state: row.state,
    parentId: row.parent_id,
    continueAt: row.continue_at,
    duration: row.duration,
    upstreamId: row.upstream_id,
    channelId: row.channel_id,
    taskUpstreamId: row.task_upstream_id,
    mediaExpired: row.media_expired,
    audioStored: row.audio_stored,
    params: row.params,
  };
}

/** The clips table: the pieces of music continuations and joins name, and the chains they form. */
@Injectable()
export class ClipsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** A task's clips, inserted in the statement that accepts it. */
  static newRows(clips: NewClip[]): DetailRows {
    return { table: 'clips', rows: clips.map((c) => snakeColumns({ parentId: null, continueAt: null, ...c })) };
  }

  /** The clips' facts (duration, upstream id, words), written in the statement that ends their task succeeded (the rows exist: upsert for safety). */
  static endRows(clips: ClipEnd[]): DetailRows {
    return {
      table: 'clips',
      rows: clips.map((c) => snakeColumns({ parentId: null, continueAt: null, upstreamId: null, title: null, lyrics: null, timedLyrics: null, createdAt: new Date().toISOString(), ...c })),
      onConflict:
        'ON CONFLICT (id) DO UPDATE SET duration = EXCLUDED.duration, upstream_id = COALESCE(EXCLUDED.upstream_id, clips.upstream_id), ' +
        'title = EXCLUDED.title, lyrics = EXCLUDED.lyrics, timed_lyrics = EXCLUDED.timed_lyrics',
    };
  }

  /** These clips of the owner (tasks not deleted), in the order asked; unknown ids are left out. */
  async findForOwner(owner: string, ids: string[]): Promise<OwnedClip[]> {
    const wanted = ids.filter((id) => isUUID(id)).map((id) => id.toLowerCase());
    if (wanted.length === 0) return [];
    const rows = await this.prisma.$queryRawUnsafe<OwnedClipRow[]>(
      `SELECT ${OWNED_COLUMNS} FROM clips c JOIN tasks t ON t.id = c.task_id WHERE c.id = ANY($1::uuid[]) AND c.owner = $2 AND t.deleted_at IS NULL`,
      wanted,
      owner,
    );
    const byId = new Map(rows.map((r) => [r.id, owned(r)]));
    return ids.flatMap((id) => byId.get(id.toLowerCase()) ?? []);
  }

  /**
   * The owner's clip (its task not deleted) with its words: the title and lyrics its maker gave, else those its task
   * asked (lyrics, or for a clip whose vendor wrote none a description is not lyrics: null), and its timed lyrics
   * (null where its maker timed none). Null when it is not the owner's.
   */
  async findWordsForOwner(owner: string, id: string): Promise<ClipWords | null> {
    if (!isUUID(id)) return null;
    const rows = await this.prisma.$queryRawUnsafe<(OwnedClipRow & { own_title: string | null; own_lyrics: string | null; timed_lyrics: TimedWord[] | null })[]>(
      `SELECT ${OWNED_COLUMNS}, c.title AS own_title, c.lyrics AS own_lyrics, c.timed_lyrics
       FROM clips c JOIN tasks t ON t.id = c.task_id WHERE c.id = $1::uuid AND c.owner = $2 AND t.deleted_at IS NULL`,
      id.toLowerCase(),
      owner,
    );
    const row = rows[0];
    if (!row) return null;
    const asked = (key: string) => (typeof row.params[key] === 'string' && row.params[key] ? (row.params[key] as string) : null);
    return { ...owned(row), title: row.own_title ?? asked('title'), lyrics: row.own_lyrics ?? asked('lyrics'), timedLyrics: row.timed_lyrics };
  }

  /** The task that made each of these clips (clips whose task is deleted, or unknown ids, left out). */
  async taskIdsOf(ids: string[]): Promise<Map<string, string>> {
    const wanted = [...new Set(ids.filter((id) => isUUID(id)).map((id) => id.toLowerCase()))];
    if (wanted.length === 0) return new Map();
    const rows = await this.prisma.$queryRawUnsafe<{ id: string; task_id: string }[]>(
      `SELECT c.id, c.task_id FROM clips c JOIN tasks t ON t.id = c.task_id WHERE c.id = ANY($1::uuid[]) AND t.deleted_at IS NULL`,
      wanted,
    );
    return new Map(rows.map((r) => [r.id, r.task_id]));
  }

  /** Where a clip's audio is: its task and place (for a task that reads it, such as a continuation). */
  findById(id: string): Promise<Pick<Clip, 'id' | 'taskId' | 'idx'> | null> {
    return this.prisma.clip.findUnique({ where: { id }, select: { id: true, taskId: true, idx: true } });
  }

  /** The chain that ends with the owner's clip `id`: from its first clip (no parent) to it; empty when it is not the owner's. */
  async chainOf(owner: string, id: string): Promise<OwnedClip[]> {
    if (!isUUID(id)) return [];
    const rows = await this.prisma.$queryRawUnsafe<(OwnedClipRow & { depth: number })[]>(
      `WITH RECURSIVE chain AS (
         SELECT c.id, c.parent_id, 0 AS depth FROM clips c WHERE c.id = $1::uuid AND c.owner = $2
         UNION ALL
         SELECT p.id, p.parent_id, chain.depth + 1 FROM chain JOIN clips p ON p.id = chain.parent_id AND p.owner = $2 WHERE chain.depth < 10000
       )
       SELECT ${OWNED_COLUMNS}, chain.depth FROM chain JOIN clips c ON c.id = chain.id JOIN tasks t ON t.id = c.task_id AND t.deleted_at IS NULL
       ORDER BY chain.depth DESC`,
      id,
      owner,
    );
    return rows.map(owned);
  }

  /** The clips of these tasks, by task and place. `tx`: read in a state change's transaction. */
  listForTasks(taskIds: string[], tx: TaskTx = this.prisma): Promise<Clip[]> {
    if (taskIds.length === 0) return Promise.resolve([]);
    return tx.clip.findMany({ where: { taskId: { in: taskIds } }, orderBy: [{ taskId: 'asc' }, { idx: 'asc' }] });
  }

  /** The ancestors of each of these clips, from the first clip of its chain to its parent. */
  async ancestorsOf(ids: string[], tx: TaskTx = this.prisma): Promise<Map<string, Ancestor[]>> {
    const out = new Map<string, Ancestor[]>();
    if (ids.length === 0) return out;
    const rows = await tx.$queryRawUnsafe<{ leaf: string; id: string; type: ClipType; cut_at: number | null }[]>(
      `WITH RECURSIVE up AS (
         SELECT c.id AS leaf, p.id, p.type, p.parent_id, p.continue_at AS own_continue_at, c.continue_at AS cut_at, 1 AS depth
         FROM clips c JOIN clips p ON p.id = c.parent_id WHERE c.id = ANY($1::uuid[])
         UNION ALL
         SELECT up.leaf, p.id, p.type, p.parent_id, p.continue_at, up.own_continue_at, up.depth + 1
         FROM up JOIN clips p ON p.id = up.parent_id WHERE up.depth < 10000
       )
       SELECT leaf, id, type, cut_at FROM up ORDER BY leaf, depth DESC`,
      ids,
    );
    for (const row of rows) {
      const list = out.get(row.leaf) ?? [];
      list.push({ id: row.id, type: row.type, cutAt: row.cut_at });
      out.set(row.leaf, list);
    }
    return out;
  }
}
