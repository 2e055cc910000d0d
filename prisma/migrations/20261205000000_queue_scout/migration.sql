-- Which of the named queues hold a job ready to start (QueueService's scout, every 500 ms), read through
-- pg-boss's partial index on waiting jobs (job_i5: name, start_after WHERE state < 'active'), never by a
-- scan of the queue's partition. The scout's statement, planned once per connection, kept a sequential scan
-- chosen while the planner's statistics were stale (a burst of jobs not yet run, then run): every look read
-- every job the queue kept (completed ones stay for days), 2,000 rows a second at 1,000 tasks in flight.
-- plpgsql: its body is checked when it runs, after pg-boss has made its schema.
CREATE OR REPLACE FUNCTION mgw_queues_with_jobs_ready(names text[]) RETURNS SETOF text
LANGUAGE plpgsql STABLE SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY
    SELECT q.name FROM unnest(names) AS q(name)
    WHERE EXISTS (SELECT 1 FROM pgboss.job j WHERE j.name = q.name AND j.state < 'active' AND j.start_after < now());
END
$$;
