import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SealingConfig } from '../config/app-config.js';
import { parseSecretKey, SecretBox } from './secret-box.js';

/** A value opened, and whether the current key sealed it (false: a previous key did; reseal it). */
export interface Opened {
  plain: string;
  current: boolean;
}

/** No key of this instance opens a stored value. */
export class SealedValueError extends Error {
  constructor(readonly keys: SealingKeys) {
    super(`a stored secret does not open with ${keys.describe()}`);
    this.name = 'SealedValueError';
  }
}

/**
 * The key that seals every secret the service stores (channel credentials, its own keys in app_secrets, the
 * owners' webhook secrets), AES-256-GCM (SecretBox), and the previous keys that still open what they sealed
 * during a rotation (CHANNEL_SECRET_KEY_PREVIOUS). A value is always sealed with the current key.
 */
export class SealingKeys {
  private readonly current: SecretBox;
  private readonly previous: SecretBox[];

  /** `source`: where the current key comes from, as messages name it. */
  constructor(key: Buffer, previousKeys: Buffer[], readonly source: string) {
    this.current = new SecretBox(key);
    this.previous = previousKeys.filter((k) => !k.equals(key)).map((k) => new SecretBox(k));
  }

  /** Whether previous keys are configured (a rotation is under way). */
  get rotating(): boolean {
    return this.previous.length > 0;
  }

  seal(plain: string): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.current.seal(plain));
  }

  /** The plain text; throws SealedValueError when no key opens it. */
  open(sealed: Uint8Array): string {
    const opened = this.tryOpen(sealed);
    if (!opened) throw new SealedValueError(this);
    return opened.plain;
  }

  /** The plain text and which key opened it; null when none does. */
  tryOpen(sealed: Uint8Array): Opened | null {
    for (const [i, box] of [this.current, ...this.previous].entries()) {
      try {
        return { plain: box.open(sealed), current: i === 0 };
      } catch {
        // not this key: the next one
      }
    }
    return null;
  }

  /** The keys as a message names them: "CHANNEL_SECRET_KEY (or CHANNEL_SECRET_KEY_PREVIOUS)". */
  describe(): string {
    return this.rotating ? `${this.source} or CHANNEL_SECRET_KEY_PREVIOUS` : this.source;
  }
}

export interface SealingKeysLog {
  log(message: string): void;
  warn(message: string): void;
}

/**
 * The sealing keys of this instance: CHANNEL_SECRET_KEY when set; otherwise the key kept in
 * DATA_DIR/sealing.key (64 hex digits, mode 0600), made at the first start. That file lives beside the
 * embedded database, so the two are kept and backed up together; with a shared database (DATABASE_URL)
 * every instance needs the same key, which CHANNEL_SECRET_KEY gives (`sharedDatabase` warns of it).
 */
export async function loadSealingKeys(config: SealingConfig, sharedDatabase: boolean, log: SealingKeysLog): Promise<SealingKeys> {
  if (config.key) return new SealingKeys(config.key, config.previousKeys, 'CHANNEL_SECRET_KEY');
  const { key, created } = await readOrCreateKeyFile(config.keyFile);
  if (created) log.log(`CHANNEL_SECRET_KEY is not set: made a sealing key for the stored secrets in ${config.keyFile}; keep that file with the database`);
  if (sharedDatabase) {
    log.warn(`CHANNEL_SECRET_KEY is not set: the stored secrets are sealed with the key in ${config.keyFile}, which every instance on this database must share and which must outlive this disk; set CHANNEL_SECRET_KEY (that file's content, or a new key with openssl rand -hex 32 and the file's in CHANNEL_SECRET_KEY_PREVIOUS)`);
  }
  return new SealingKeys(key, config.previousKeys, `the key in ${config.keyFile} (CHANNEL_SECRET_KEY is not set)`);
}

/** Reads the key file, or makes it: written aside then linked into place, so two processes starting at once agree on one key. */
async function readOrCreateKeyFile(file: string): Promise<{ key: Buffer; created: boolean }> {
  try {
    return { key: await readKeyFile(file), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(path.dirname(file), { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY });
  await chmod(draft, 0o600);
  let created = true;
  try {
    await link(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    created = false; // another process made it first: its key is the one
  } finally {
    await unlink(draft).catch(() => undefined);
  }
  return { key: await readKeyFile(file), created };
}

async function readKeyFile(file: string): Promise<Buffer> {
  const key = parseSecretKey(await readFile(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold a sealing key (64 hex digits): restore it from a backup, or set CHANNEL_SECRET_KEY to the key the stored secrets were sealed with`);
  // readable by others (copied by hand): made the owner's only, as it was written
  if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600).catch(() => undefined);
  return key;
}
