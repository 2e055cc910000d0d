import { sendBytes, startServer } from './http-server.js';

/**
 * A file server that answers nothing until the test lets it: every request waits, then gets `bytes`, and once
 * released every later one is answered at once. A task whose input is fetched from it stays running until the
 * test says so, however slow the machine: an assertion that needs it unfinished holds by construction, not by
 * a delay (the model: the held file server of test/e2e/limits.e2e.ts).
 */
export interface HeldFiles {
  url: string;
  /** Requests that arrived and wait for their answer (a client that went away meanwhile included); 0 once released. */
  waiting(): number;
  /** Answers every waiting request, and from now on every new one at once. */
  release(): void;
  close(): Promise<void>;
}

export async function startHeldFiles(type: string, bytes: Buffer): Promise<HeldFiles> {
  let released = false;
  const held: (() => void)[] = [];
  const server = await startServer((req, res) => {
    // a client that went away while it waited (its process killed, its step ended) gets nothing
    const answer = () => void (req.socket.destroyed || sendBytes(res, type, bytes));
    if (released) answer();
    else held.push(answer);
  });
  const release = () => {
    released = true;
    for (const answer of held.splice(0)) answer();
  };
  return {
    url: server.url,
    waiting: () => held.length,
    release,
    close: async () => {
      release();
      await server.close();
    },
  };
}
