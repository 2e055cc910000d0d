/**
 * Pool settings for the service's PostgreSQL pools: an idle connection is kept, not closed after pg's
 * default 10 s. A connection costs PostgreSQL a process start and its catalog caches (about 30 ms of its
 * CPU here, and the statements prepared on it); at idle, a pool that closed and reopened its spare
 * connections every few seconds spent more of PostgreSQL's CPU than all the statements it ran. The pool
 * size bounds how many are kept; each is replaced after an hour so none grows without bound.
 */
export const KEPT_CONNECTIONS = { idleTimeoutMillis: 0, maxLifetimeSeconds: 3600 } as const;
