-- An upstream's callback that comes while its task is not waiting on it (the create's answer not yet in, or a
-- step under way: no row of task_watches to bring forward) is kept on the task, and its next wait is polled at
-- once. It was dropped, and a vendor that ended a task quickly had it wait for the safety poll (UPSTREAM_CALLBACK_POLL_S).
ALTER TABLE "tasks" ADD COLUMN "upstream_called_back" BOOLEAN NOT NULL DEFAULT false;
