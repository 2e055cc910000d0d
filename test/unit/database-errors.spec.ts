import { isDatabaseUnavailable, isDeadlock, retryOnDeadlock } from '../../src/infra/database/database-errors.js';

const prisma = (code: string, cause?: Record<string, unknown>) => Object.assign(new Error(`prisma ${code}`), { code, meta: cause ? { driverAdapterError: { name: 'DriverAdapterError', cause } } : {} });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['Prisma: server unreachable (P1001)', prisma('P1001', { kind: 'DatabaseNotReachable' })],
    ['Prisma raw query: server unreachable (P2010 + DatabaseNotReachable)', prisma('P2010', { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 })],
    ['Prisma raw query: connection closed', prisma('P2010', { kind: 'ConnectionClosed' })],
    ['Prisma raw query: terminated by a shutdown (57P01)', prisma('P2010', { kind: 'postgres', code: '57P01', originalCode: '57P01' })],
    ['Prisma: a transaction could not start in time (P2028, pool exhausted)', prisma('P2028')],
    ['pg: connection refused', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['pg: refused on every address', new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], 'x')],
    ['pg: the database is starting up', Object.assign(new Error('the database system is starting up'), { code: '57P03' })],
    ['pg-pool: no connection in time', new Error('timeout exceeded when trying to connect')],
    ['pg: connection terminated', new Error('Connection terminated unexpectedly')],
    ['wrapped in a cause', new Error('outer', { cause: Object.assign(new Error('inner'), { code: '08006' }) })],
  ])('%s: yes', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation (P2002)', prisma('P2002')],
    ['a bad value in a raw query (22P02)', prisma('P2010', { kind: 'postgres', code: '22P02' })],
    ['an HTTP fetch that failed', Object.assign(new Error('the connection failed: ETIMEDOUT'), { kind: 'network' })],
    ['a plain error', new Error('boom')],
    ['not an error at all', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('%s: no', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('isDeadlock and retryOnDeadlock', () => {
  const pgDeadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
  it.each([
    ['pg', pgDeadlock()],
    ["Prisma raw query (P2010 + the adapter's postgres error)", prisma('P2010', { kind: 'postgres', code: '40P01', originalCode: '40P01' })],
    ['wrapped in a cause', new Error('outer', { cause: pgDeadlock() })],
  ])('%s: a deadlock', (_, error) => {
    expect(isDeadlock(error)).toBe(true);
  });
  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a serialization failure', Object.assign(new Error('could not serialize'), { code: '40001' })],
    ['no code', new Error('x')],
  ])('%s: not a deadlock', (_, error) => {
    expect(isDeadlock(error)).toBe(false);
  });

  it("runs the work again after a deadlock, up to three runs in all, and throws anything else at once", async () => {
    let runs = 0;
    expect(await retryOnDeadlock(async () => (++runs < 3 ? Promise.reject(pgDeadlock()) : 'done'))).toBe('done');
    expect(runs).toBe(3);
    runs = 0;
    await expect(retryOnDeadlock(async () => (++runs, Promise.reject(pgDeadlock())))).rejects.toThrow('deadlock detected');
    expect(runs).toBe(3);
    runs = 0;
    await expect(retryOnDeadlock(async () => (++runs, Promise.reject(Object.assign(new Error('duplicate key'), { code: '23505' }))))).rejects.toThrow('duplicate key');
    expect(runs).toBe(1);
  });
});
