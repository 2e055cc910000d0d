import type { Prisma } from '../../generated/prisma/client.js';

/** What pg-boss needs to run its SQL on our connection: used to enqueue inside a Prisma transaction. */
export interface SqlExecutor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Runs SQL in the given Prisma transaction, so a job is written in the same transaction as its task. */
export function sqlExecutorOf(tx: Prisma.TransactionClient): SqlExecutor {
  return {
    executeSql: async (text, values = []) => {
      const args = values.map((v) => (v === undefined ? null : typeof v === 'object' && v !== null && !(v instanceof Date) ? JSON.stringify(v) : v));
      return { rows: await tx.$queryRawUnsafe<unknown[]>(text, ...args) };
    },
  };
}
