import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { SealingKeys } from '../crypto/sealing-keys.js';
import { onOneConnection } from './one-connection.js';

/**
 * A column of the schema that holds sealed values (SecretBox under the sealing key), and the column that
 * holds the same value in plain text on a row written before values were sealed (sealed at the next start).
 */
export interface SealedColumn {
  table: string;
  /** The primary key, to name a row. */
  key: string;
  column: string;
  plainColumn?: string;
  /** What a value is, in messages: "webhook secret" of owner X. */
  what: string;
}

/** Every sealed column of the schema (see prisma/schema.prisma: "Sealed"). */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'app_secrets', key: 'name', column: 'value', plainColumn: 'plain_value', what: 'service secret' },
  { table: 'webhook_secrets', key: 'owner', column: 'secret', plainColumn: 'plain_secret', what: 'webhook secret of owner' },
  { table: 'webhook_secrets', key: 'owner', column: 'previous_secret', plainColumn: 'plain_previous_secret', what: 'previous webhook secret of owner' },
  { table: 'channels', key: 'id', column: 'credentials', what: 'credentials of channel' },
];

/** Serialises the sealing step of instances starting together (not the migrations' 72_804_115 nor the queue set-up's 72_804_116). */
const SEALING_LOCK_ID = 72_804_121;

/**
 * A service secret of its own that the first start seals, so that a database always holds a sealed value:
 * an instance started later with another key (two instances without CHANNEL_SECRET_KEY, each with its own
 * DATA_DIR/sealing.key, on a new database) meets it here and refuses, instead of sealing a secret of its
 * own beside the first's and failing on the other's later.
 */
export const SEALING_CHECK = 'sealing-check';

export interface SealingReport {
  /** Values that opened with the current key and stay as they are. */
  current: number;
  /** Plain-text values (from before sealing) now sealed. */
  sealed: number;
  /** Values sealed under a previous key (CHANNEL_SECRET_KEY_PREVIOUS), now sealed under the current one. */
  resealed: number;
}

export class SealingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealingError';
  }
}

/**
 * At every start, after the migrations, in one transaction: every stored secret is opened with this
 * instance's keys; a plain-text one (written before secrets were sealed) is sealed, one sealed under a
 * previous key is sealed again under the current key. When any value opens with none of its keys the
 * transaction is rolled back and the start refused, naming what does not open: so an instance with
 * another key (a second instance whose DATA_DIR made its own, a mistyped CHANNEL_SECRET_KEY) stops here,
 * rather than failing later on the first webhook or channel call.
 */
export function sealStoredSecrets(database: string | pg.Pool, keys: SealingKeys): Promise<SealingReport> {
  return onOneConnection(database, (client) => sealOn(client, keys));
}

async function sealOn(client: pg.ClientBase, keys: SealingKeys): Promise<SealingReport> {
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [SEALING_LOCK_ID]);
    const report: SealingReport = { current: 0, sealed: 0, resealed: 0 };
    const unopened: string[] = [];
    for (const c of SEALED_COLUMNS) {
      const plain = c.plainColumn ? `, "${c.plainColumn}" AS plain` : ', NULL AS plain';
      const where = c.plainColumn ? `"${c.column}" IS NOT NULL OR "${c.plainColumn}" IS NOT NULL` : `"${c.column}" IS NOT NULL`;
      // no row is locked (running instances go on using them); each change below applies only to the value
      // read, so one a running instance changed meanwhile (a rotation) is not overwritten with the old one
      const { rows } = await client.query<{ ref: string; sealed: Buffer | null; plain: string | null }>(`SELECT "${c.key}"::text AS ref, "${c.column}" AS sealed${plain} FROM "${c.table}" WHERE ${where} ORDER BY 1`);
      for (const row of rows) {
        if (row.sealed) {
          const opened = keys.tryOpen(row.sealed);
          if (!opened) unopened.push(`the ${c.what} ${row.ref}`);
          else if (opened.current) report.current++;
          else {
            await client.query(`UPDATE "${c.table}" SET "${c.column}" = $2 WHERE "${c.key}"::text = $1 AND "${c.column}" = $3`, [row.ref, keys.seal(opened.plain), row.sealed]);
            report.resealed++;
          }
        } else if (row.plain !== null && c.plainColumn) {
          await client.query(`UPDATE "${c.table}" SET "${c.column}" = $2, "${c.plainColumn}" = NULL WHERE "${c.key}"::text = $1 AND "${c.plainColumn}" = $3`, [row.ref, keys.seal(row.plain), row.plain]);
          report.sealed++;
        }
      }
    }
    if (unopened.length === 0) {
      await client.query('INSERT INTO app_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [SEALING_CHECK, keys.seal(randomBytes(32).toString('base64url'))]);
    } else {
      await client.query('ROLLBACK');
      const listed = unopened.length > 5 ? `${unopened.slice(0, 5).join(', ')} and ${unopened.length - 5} more` : unopened.join(', ');
      throw new SealingError(
        `${unopened.length} stored secret(s) do not open with ${keys.describe()} (${listed}): they were sealed with another key. ` +
          'Start with the key they were sealed with: every instance on one database needs the same CHANNEL_SECRET_KEY; ' +
          'after a change of key, put the former one in CHANNEL_SECRET_KEY_PREVIOUS until the next start has sealed everything again (docs/operators/configuration.md, "Sealed secrets")',
      );
    }
    await client.query('COMMIT');
    return report;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
